// Reading ptxas's output. The formats are fixed: messages are
// "ptxas <file>, line N; <severity padded to 8> : <text>", resource lines follow -v.
#include <charconv>
#include <cstdlib>
#include <optional>

#include "toolchain/ptxas.h"
#include "util/text.h"

namespace ptxforge::toolchain {

const FunctionResources* AssembleResult::find(std::string_view name) const {
  for (auto& f : functions)
    if (f.name == name) return &f;
  return nullptr;
}

namespace {

int to_int(std::string_view s) {
  int v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

std::string_view line_of(std::string_view source, uint32_t n) {
  size_t pos = 0;
  for (uint32_t i = 1; i < n; ++i) {
    pos = source.find('\n', pos);
    if (pos == std::string_view::npos) return {};
    ++pos;
  }
  size_t end = source.find('\n', pos);
  return source.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
}

// The column of the first quoted word of the message on the source line, or of the first
// non-blank character.
uint32_t column_for(std::string_view msg, std::string_view line) {
  size_t q = msg.find('\'');
  if (q != std::string_view::npos) {
    size_t e = msg.find('\'', q + 1);
    if (e != std::string_view::npos && e > q + 1) {
      std::string_view word = msg.substr(q + 1, e - q - 1);
      size_t at = line.find(word);
      if (at != std::string_view::npos) return static_cast<uint32_t>(at + 1);
    }
  }
  size_t first = line.find_first_not_of(" \t");
  return first == std::string_view::npos ? 1 : static_cast<uint32_t>(first + 1);
}

Severity severity_of(std::string_view s) {
  if (s == "warning") return Severity::warning;
  if (s == "info") return Severity::note;
  return Severity::error;  // error, fatal
}

// The pieces of ptxas's output, read by hand (std::regex is slow and, under g++ 12 with
// sanitizers, noisy).
bool all_digits(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

// The number that ends just before position `end`: "4096 bytes smem" -> 4096.
std::optional<int> number_ending_at(std::string_view line, size_t end) {
  size_t begin = end;
  while (begin > 0 && line[begin - 1] >= '0' && line[begin - 1] <= '9') --begin;
  if (begin == end) return std::nullopt;
  return to_int(line.substr(begin, end - begin));
}

std::optional<int> number_before(std::string_view line, std::string_view suffix) {
  size_t at = line.find(suffix);
  return at == std::string_view::npos ? std::nullopt : number_ending_at(line, at);
}

std::optional<int> number_after(std::string_view line, std::string_view prefix) {
  size_t at = line.find(prefix);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + prefix.size());
  size_t n = 0;
  while (n < rest.size() && rest[n] >= '0' && rest[n] <= '9') ++n;
  if (n == 0) return std::nullopt;
  return to_int(rest.substr(0, n));
}

// The constant-bank bytes of a resource line, all banks together ("536 bytes cmem[0], 8 bytes cmem[2]").
int constant_bytes(std::string_view line) {
  int total = 0;
  for (size_t at = line.find(" bytes cmem["); at != std::string_view::npos; at = line.find(" bytes cmem[", at + 1))
    total += number_ending_at(line, at).value_or(0);
  return total;
}

// The first '...'-quoted word at or after `from`.
std::string_view quoted(std::string_view s, size_t from) {
  if (from == std::string_view::npos) return {};
  size_t a = s.find('\'', from);
  if (a == std::string_view::npos) return {};
  size_t b = s.find('\'', a + 1);
  return b == std::string_view::npos ? std::string_view{} : s.substr(a + 1, b - a - 1);
}

// "ptxas k.ptx, line 9; error   : msg" or "ptxas fatal   : msg" as a Diagnostic.
std::optional<Diagnostic> message_of(std::string_view line, std::string_view source) {
  if (!starts_with(line, "ptxas ")) return std::nullopt;
  std::string_view rest = line.substr(6);
  Diagnostic d;
  d.check_id = "ptxas";
  size_t sem = rest.find("; ");
  size_t at_line = rest.find(", line ");
  bool located = at_line != std::string_view::npos && sem != std::string_view::npos && at_line < sem;
  if (located) {
    auto n = number_after(rest.substr(at_line), ", line ");
    if (!n) return std::nullopt;
    d.loc.line = static_cast<uint32_t>(*n);
    rest = rest.substr(sem + 2);
  }
  size_t colon = rest.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::string_view severity = trim(rest.substr(0, colon));
  if (severity != "error" && severity != "warning" && severity != "fatal" && severity != "info") return std::nullopt;
  d.severity = severity_of(severity);
  d.message = std::string(trim(rest.substr(colon + 1)));
  if (!located) {
    if (d.message == "Ptx assembly aborted due to errors") return std::nullopt;  // always last; nothing new
    if (d.severity == Severity::note && d.message.find("(C") == std::string::npos) return std::nullopt;  // -v chatter
  } else {
    d.loc.col = column_for(d.message, line_of(source, d.loc.line));
  }
  if (!d.message.empty() && d.message.back() == '.') d.message.pop_back();
  if (d.message == "Optimized debugging not supported")
    d.hint = "the module targets 'debug' (as nvcc -G writes it): assemble it with -O0";
  return d;
}

}  // namespace

void parse_ptxas_output(std::string_view log, std::string_view source, AssembleResult& out) {
  FunctionResources* current = nullptr;
  auto function_named = [&](std::string_view name) -> FunctionResources* {
    for (auto& f : out.functions)
      if (f.name == name) return &f;
    out.functions.push_back(FunctionResources{});
    out.functions.back().name = std::string(name);
    return &out.functions.back();
  };
  std::vector<std::string_view> linker_lines;
  for (auto raw : split(log, '\n')) {
    std::string_view line = trim(raw);
    // nvJitLink adds its linker's summary ("info    : Function properties for 'k':"); it
    // describes the linked image, and is read only when ptxas's own report is absent.
    if (starts_with(line, "info")) linker_lines.push_back(line);
    if (line.empty() || starts_with(line, "info")) continue;
    for (size_t at = line.find("(C"); at != std::string_view::npos; at = line.find("(C", at + 1))
      if (at + 7 <= line.size() && line[at + 6] == ')' && all_digits(line.substr(at + 2, 4)))
        out.info_codes.emplace_back(line.substr(at + 1, 5));
    if (size_t at = line.find("Compiling "); at != std::string_view::npos) {
      std::string_view rest = line.substr(at + 10);
      bool entry = starts_with(rest, "entry function '");
      if (entry || starts_with(rest, "function '")) {
        auto name = quoted(rest, 0);
        current = function_named(name);
        current->is_entry = entry;
        current->arch = std::string(quoted(rest, rest.find(" for ")));
        continue;
      }
    }
    if (size_t at = line.find("Function properties for "); at != std::string_view::npos) {
      current = function_named(trim(line.substr(at + 24)));
      continue;
    }
    if (current && line.find("bytes stack frame") != std::string_view::npos) {
      current->stack_frame = number_before(line, " bytes stack frame").value_or(0);
      current->spill_stores = number_before(line, " bytes spill stores").value_or(0);
      current->spill_loads = number_before(line, " bytes spill loads").value_or(0);
      continue;
    }
    if (current && line.find("Used ") != std::string_view::npos && line.find(" registers") != std::string_view::npos) {
      current->registers = number_after(line, "Used ").value_or(0);
      current->barriers = number_after(line, "used ").value_or(0);
      current->shared_bytes = number_before(line, " bytes smem").value_or(0);
      current->local_bytes = number_before(line, " bytes lmem").value_or(0);
      current->cumulative_stack = number_before(line, " bytes cumulative stack size").value_or(0);
      current->const_bytes = constant_bytes(line);
      continue;
    }
    if (current && line.find("Compile time = ") != std::string_view::npos) {
      std::string_view v = line.substr(line.find("Compile time = ") + 15);
      current->compile_ms = std::strtod(std::string(v.substr(0, v.find(' '))).c_str(), nullptr);
      continue;
    }
    if (auto d = message_of(line, source)) out.diags.add(std::move(*d));
  }
  // Some nvJitLink builds print no ptxas report under -verbose, only the linker's summary:
  //   info    : Function properties for 'k':
  //   info    : used 8 registers, used 0 barriers, 0 stack, 0 bytes smem, 536 bytes cmem[0], 0 bytes lmem
  if (out.functions.empty()) {
    current = nullptr;
    for (std::string_view line : linker_lines) {
      if (size_t at = line.find("Function properties for "); at != std::string_view::npos) {
        current = function_named(quoted(line, at));
        continue;
      }
      if (current && line.find(" registers") != std::string_view::npos) {
        std::string_view rest = line.substr(line.find(':') + 1);
        current->registers = number_after(rest, "used ").value_or(0);
        if (size_t b = rest.find(", used "); b != std::string_view::npos)
          current->barriers = number_after(rest.substr(b), ", used ").value_or(0);
        current->stack_frame = number_before(rest, " stack").value_or(0);
        current->shared_bytes = number_before(rest, " bytes smem").value_or(0);
        current->local_bytes = number_before(rest, " bytes lmem").value_or(0);
        current->const_bytes = constant_bytes(rest);
      }
    }
  }
  out.diags.sort_by_location();  // the JIT log is not in line order
}

}  // namespace ptxforge::toolchain
