#include "util/diagnostic.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace ptxforge {

std::string_view severity_name(Severity s) {
  switch (s) {
    case Severity::error: return "error";
    case Severity::warning: return "warning";
    case Severity::note: return "note";
  }
  return "error";
}

SourceText::SourceText(std::string name, std::string_view text) : name_(std::move(name)), text_(text) {
  starts_.push_back(0);
  const char* begin = text.data();
  const char* end = begin + text.size();
  for (const char* p = begin; (p = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p))));) {
    if (++p == end) break;
    starts_.push_back(static_cast<uint32_t>(p - begin));
  }
}

std::string_view SourceText::line(uint32_t line_no) const {
  if (line_no == 0 || line_no > starts_.size()) return {};
  size_t b = starts_[line_no - 1];
  size_t e = text_.find('\n', b);
  if (e == std::string_view::npos) e = text_.size();
  if (e > b && text_[e - 1] == '\r') --e;
  return text_.substr(b, e - b);
}

Diagnostic& Diagnostics::error(SourceLoc loc, std::string message, std::string check_id) {
  list_.push_back(Diagnostic{Severity::error, loc, 1, std::move(message), std::move(check_id), {}, {}, {}});
  return list_.back();
}

Diagnostic& Diagnostics::warning(SourceLoc loc, std::string message, std::string check_id) {
  list_.push_back(Diagnostic{Severity::warning, loc, 1, std::move(message), std::move(check_id), {}, {}, {}});
  return list_.back();
}

size_t Diagnostics::error_count() const {
  return std::count_if(list_.begin(), list_.end(), [](auto& d) { return d.severity == Severity::error; });
}

size_t Diagnostics::warning_count() const {
  return std::count_if(list_.begin(), list_.end(), [](auto& d) { return d.severity == Severity::warning; });
}

void Diagnostics::sort_by_location() {
  std::stable_sort(list_.begin(), list_.end(), [](const Diagnostic& a, const Diagnostic& b) {
    if (a.loc.line != b.loc.line) return a.loc.line < b.loc.line;
    return a.loc.col < b.loc.col;
  });
}

void Diagnostics::cap(size_t max_count) {
  if (list_.size() <= max_count) return;
  size_t dropped = list_.size() - max_count;
  list_.resize(max_count);
  Diagnostic d;
  d.severity = Severity::note;
  d.message = fmt::format("{} more diagnostics not shown", dropped);
  d.check_id = "too-many-diagnostics";
  list_.push_back(std::move(d));
}

namespace {

// Printable form of a source line: tabs kept (so the caret lines up), control bytes and
// invalid UTF-8 shown as '?', so garbage input cannot scramble a terminal.
std::string printable(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  for (unsigned char c : line) out.push_back((c == '\t' || (c >= 0x20 && c < 0x7f)) ? char(c) : '?');
  return out;
}

std::string caret_line(std::string_view line, uint32_t col, uint32_t length) {
  std::string out;
  for (uint32_t i = 1; i < col && i - 1 < line.size(); ++i) out.push_back(line[i - 1] == '\t' ? '\t' : ' ');
  out.push_back('^');
  for (uint32_t i = 1; i < length && i < 200; ++i) out.push_back('~');
  return out;
}

std::string location_prefix(const SourceText& src, SourceLoc loc) {
  if (loc.line == 0) return src.name() + ":";
  if (loc.col == 0) return fmt::format("{}:{}:", src.name(), loc.line);
  return fmt::format("{}:{}:{}:", src.name(), loc.line, loc.col);
}

void append_json_string(std::string& out, std::string_view s) {
  out.push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c >= 0x7f) out += fmt::format("\\u{:04x}", c);  // bytes, not code points
        else out.push_back(char(c));
    }
  }
  out.push_back('"');
}

}  // namespace

std::string render_one(const Diagnostic& d, const SourceText& src, bool color) {
  const char* bold = color ? "\033[1m" : "";
  const char* reset = color ? "\033[0m" : "";
  const char* sev_color = !color ? "" : d.severity == Severity::error ? "\033[1;31m"
                                      : d.severity == Severity::warning ? "\033[1;35m" : "\033[1;36m";
  std::string out = fmt::format("{}{} {}{}:{} {}{}", bold, location_prefix(src, d.loc), sev_color,
                                severity_name(d.severity), reset, bold, d.message);
  if (!d.check_id.empty()) out += fmt::format(" [{}]", d.check_id);
  out += reset;
  out += '\n';
  if (d.loc.line != 0) {
    std::string_view line = src.line(d.loc.line);
    if (!line.empty() || d.loc.line <= src.line_count()) {
      out += "  " + printable(line) + "\n";
      if (d.loc.col != 0) out += "  " + caret_line(line, d.loc.col, d.length) + "\n";
    }
  }
  if (d.fixit) {
    if (d.fixit->replacement.empty())
      out += "  fix-it: remove this\n";
    else
      out += fmt::format("  fix-it: {} '{}'\n", d.fixit->length ? "replace with" : "insert", d.fixit->replacement);
  }
  if (!d.hint.empty()) out += "  hint: " + d.hint + "\n";
  for (auto& n : d.notes) {
    out += fmt::format("{} note: {}\n", location_prefix(src, n.loc), n.message);
    if (n.loc.line != 0) {
      std::string_view line = src.line(n.loc.line);
      out += "  " + printable(line) + "\n";
      if (n.loc.col != 0) out += "  " + caret_line(line, n.loc.col, 1) + "\n";
    }
  }
  return out;
}

std::string render_text(const Diagnostics& diags, const SourceText& src, bool color) {
  std::string out;
  for (auto& d : diags.list()) out += render_one(d, src, color);
  size_t e = diags.error_count(), w = diags.warning_count();
  if (e || w)
    out += fmt::format("{}: {} error{}, {} warning{}\n", src.name(), e, e == 1 ? "" : "s", w, w == 1 ? "" : "s");
  return out;
}

// Hand-written JSON keeps nlohmann out of this widely linked file; the shape is small and fixed.
std::string render_json(const Diagnostics& diags, const SourceText& src) {
  std::string out = "{\"file\":";
  append_json_string(out, src.name());
  out += fmt::format(",\"errors\":{},\"warnings\":{},\"diagnostics\":[", diags.error_count(), diags.warning_count());
  bool first = true;
  for (auto& d : diags.list()) {
    if (!first) out += ',';
    first = false;
    out += "{\"severity\":";
    append_json_string(out, severity_name(d.severity));
    out += fmt::format(",\"line\":{},\"column\":{},\"length\":{},\"check\":", d.loc.line, d.loc.col, d.length);
    append_json_string(out, d.check_id);
    out += ",\"message\":";
    append_json_string(out, d.message);
    out += ",\"source_line\":";
    append_json_string(out, src.line(d.loc.line));
    if (!d.hint.empty()) {
      out += ",\"hint\":";
      append_json_string(out, d.hint);
    }
    if (d.fixit) {
      out += fmt::format(",\"fixit\":{{\"line\":{},\"column\":{},\"length\":{},\"replacement\":", d.fixit->loc.line,
                         d.fixit->loc.col, d.fixit->length);
      append_json_string(out, d.fixit->replacement);
      out += "}";
    }
    out += ",\"notes\":[";
    for (size_t i = 0; i < d.notes.size(); ++i) {
      if (i) out += ',';
      out += fmt::format("{{\"line\":{},\"column\":{},\"message\":", d.notes[i].loc.line, d.notes[i].loc.col);
      append_json_string(out, d.notes[i].message);
      out += "}";
    }
    out += "]}";
  }
  out += "]}\n";
  return out;
}

}  // namespace ptxforge
