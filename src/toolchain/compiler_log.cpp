// The compiler log filter (compiler_log.h). It knows the shapes the CUDA compilers print:
// EDG's (NVRTC, nvcc's front end) `file(12): error: ...` followed by the quoted source line,
// a caret and "detected during instantiation ... at line N [of file]" context; gcc's
// `file:12:5: error: ...` with ` 12 | code` quotes; ptxas's and nvcc's own `ptxas error : ...`
// lines; and the closing "N errors detected in the compilation of ...". A line of any other
// shape is dropped: passing on only what is recognised is what keeps the promise.
#include "toolchain/compiler_log.h"

#include <cctype>
#include <filesystem>
#include <fmt/format.h>
#include <optional>

#include "toolchain/cuda_includes.h"

namespace ptxforge::toolchain {

namespace {

constexpr size_t npos = std::string_view::npos;

std::string no_space(std::string_view s) {
  std::string o;
  for (char c : s)
    if (!std::isspace(static_cast<unsigned char>(c))) o += c;
  return o;
}

// "12" at the start of s (then s is advanced past it).
std::optional<uint32_t> take_number(std::string_view& s) {
  size_t i = 0;
  uint64_t v = 0;
  while (i < s.size() && i < 9 && std::isdigit(static_cast<unsigned char>(s[i]))) v = v * 10 + static_cast<uint64_t>(s[i++] - '0');
  if (i == 0) return std::nullopt;
  s.remove_prefix(i);
  return static_cast<uint32_t>(v);
}

// A located message: `file(12): rest` or `file:12:5: rest` / `file:12: rest`.
struct Located {
  std::string file;
  uint32_t line = 0;
  std::string_view rest;  // after the location, starting at the severity
};

std::optional<Located> parse_location(std::string_view l) {
  // EDG: the first "(digits): " in the line.
  for (size_t p = l.find('('); p != npos; p = l.find('(', p + 1)) {
    std::string_view t = l.substr(p + 1);
    auto n = take_number(t);
    if (n && t.substr(0, 3) == "): " && p > 0) return Located{std::string(l.substr(0, p)), *n, t.substr(3)};
  }
  // gcc: "file:12:5: " or "file:12: ".
  for (size_t p = l.find(':'); p != npos; p = l.find(':', p + 1)) {
    std::string_view t = l.substr(p + 1);
    auto n = take_number(t);
    if (!n || p == 0) continue;
    if (t.substr(0, 1) == ":") {
      std::string_view u = t.substr(1);
      if (take_number(u)) t = u;
      if (t.substr(0, 2) == ": ") return Located{std::string(l.substr(0, p)), *n, t.substr(2)};
    }
  }
  return std::nullopt;
}

std::string_view severity_of(std::string_view rest) {
  for (std::string_view s : {"catastrophic error", "internal error", "fatal error", "error", "warning", "remark", "note"})
    if (rest.substr(0, s.size()) == s) return s;
  return "";
}

std::string_view candidate_line(std::string_view src, uint32_t n) {
  size_t pos = 0;
  for (uint32_t i = 1; i < n; ++i) {
    pos = src.find('\n', pos);
    if (pos == npos) return "";
    ++pos;
  }
  return src.substr(pos, src.find('\n', pos) == npos ? npos : src.find('\n', pos) - pos);
}

bool caret_line(std::string_view l) {
  bool any = false;
  for (char c : l) {
    if (c == '^' || c == '~') any = true;
    else if (c != ' ' && c != '\t' && c != '|' && !std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return any;
}

// A header's name relative to the folder it was found in, when it is under one.
std::optional<std::string> header_name(const std::string& file, const std::vector<std::string>& dirs) {
  std::string norm = std::filesystem::path(file).lexically_normal().string();
  std::optional<std::string> best;
  for (auto& d : dirs) {
    std::string root = std::filesystem::path(d).lexically_normal().string();
    if (!root.empty() && root.back() != '/') root += '/';
    if (norm.size() > root.size() && norm.compare(0, root.size(), root) == 0) {
      std::string rel = norm.substr(root.size());
      if (!best || rel.size() < best->size()) best = rel;
    }
  }
  return best;
}

}  // namespace

std::vector<std::string> LogFilter::default_toolkit_header_dirs() {
  // Both spellings of each toolkit folder: NVRTC names a header by the -I path it was given,
  // nvcc by the toolkit's real place (targets/x86_64-linux/include behind a symlink).
  std::vector<std::string> dirs;
  for (auto& d : toolkit_include_dirs()) {
    dirs.push_back(d);
    std::error_code ec;
    auto real = std::filesystem::canonical(d, ec);
    if (!ec && real.string() != d) dirs.push_back(real.string());
  }
  return dirs;
}

std::string filter_compiler_log(std::string_view log, const LogFilter& f) {
  const std::string& cand = f.candidate_name;
  const std::string shown = f.display_name.empty() ? cand : f.display_name;
  std::string out;
  size_t dropped = 0;
  // The candidate's line the last kept message is located at: the quote and caret that
  // follow it may be kept, when the quote really is that line.
  std::optional<uint32_t> quoting;
  bool quote_seen = false;
  size_t pos = 0;
  while (pos < log.size()) {
    size_t nl = log.find('\n', pos);
    std::string_view l = log.substr(pos, nl == npos ? npos : nl - pos);
    pos = nl == npos ? log.size() : nl + 1;
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    if (l.empty()) {
      quoting.reset();
      continue;
    }
    if (quoting) {
      std::string code = no_space(candidate_line(f.candidate_source, *quoting));
      std::string_view quoted = l;
      // gcc quotes as " 12 |   code".
      if (size_t bar = l.find('|'); bar != npos && no_space(l.substr(0, bar)) == std::to_string(*quoting)) quoted = l.substr(bar + 1);
      std::string q = no_space(quoted);
      if (!quote_seen && !q.empty() && !code.empty() && code.find(q) != npos) {
        out += std::string(l) + "\n";
        quote_seen = true;
        continue;
      }
      if (quote_seen && caret_line(l)) {
        out += std::string(l) + "\n";
        continue;
      }
      // EDG's template context: kept when it points into the candidate.
      std::string_view t = l;
      while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.remove_prefix(1);
      if (t.starts_with("detected during") || t.starts_with("instantiation of") || t.starts_with("implicit generation of")) {
        size_t at = t.rfind(" at line ");
        std::string_view tail = at == npos ? std::string_view() : t.substr(at + 9);
        auto n = take_number(tail);
        if (t == "detected during:" || (n && (tail.empty() || tail == " of \"" + cand + "\"" || tail == " of " + cand))) {
          std::string kept(l);
          if (size_t c = kept.rfind(cand); c != npos && shown != cand) kept.replace(c, cand.size(), shown);
          out += kept + "\n";
          continue;
        }
        ++dropped;
        continue;
      }
      quoting.reset();
    }
    if (auto loc = parse_location(l)) {
      std::string_view sev = severity_of(loc->rest);
      if (loc->file == cand) {
        out += fmt::format("{}({}): {}\n", shown, loc->line, loc->rest);
        quoting = loc->line;
        quote_seen = false;
        continue;
      }
      if (!sev.empty() && sev != "note") {
        auto h = header_name(loc->file, f.toolkit_dirs);
        bool toolkit = h.has_value();
        if (!h) h = header_name(loc->file, f.system_dirs);
        if (h) {
          out += fmt::format("{}: {} in {} header <{}>:{}{}\n", shown, sev, toolkit ? "toolkit" : "system", *h, loc->line,
                             sev == "catastrophic error" || sev == "fatal error"
                                 ? " (its text is not quoted; NVRTC has no host C/C++ library headers, which some toolkit "
                                   "headers, such as <cuda.h>, include)"
                                 : "");
          continue;
        }
      }
      ++dropped;
      continue;
    }
    std::string_view t = l;
    if (t.starts_with("ptxas ") || t.starts_with("nvcc fatal") || t.starts_with("nvcc error") ||
        t.starts_with("nvcc warning") || t == "Compilation terminated." ||
        t.starts_with("Remark: The warnings can be suppressed with")) {
      out += std::string(l) + "\n";
      continue;
    }
    if (t.find(" detected in the compilation of \"" + cand + "\".") != npos && std::isdigit(static_cast<unsigned char>(t.front()))) {
      std::string kept(l);
      kept.replace(kept.find(cand), cand.size(), shown);
      out += kept + "\n";
      continue;
    }
    if (t == "In file included from " + cand + ":" || (t.starts_with(cand + ": In ") && t.ends_with(":"))) {
      out += std::string(l) + "\n";
      continue;
    }
    ++dropped;
  }
  if (dropped)
    out += fmt::format("({} line{} of the compiler's output not located in {} left out)\n", dropped, dropped == 1 ? "" : "s", shown);
  return out;
}

}  // namespace ptxforge::toolchain
