// Reading ptxas's output. The formats are fixed (see PTX-FACTS): messages are
// "ptxas <file>, line N; <severity padded to 8> : <text>", resource lines follow -v.
#include <charconv>
#include <regex>

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

}  // namespace

void parse_ptxas_output(std::string_view log, std::string_view source, AssembleResult& out) {
  static const std::regex located(R"(^ptxas (.*), line (\d+); (error|warning|fatal|info)\s*: (.*)$)");
  static const std::regex plain(R"(^ptxas (error|warning|fatal|info)\s*: (.*)$)");
  static const std::regex compiling(R"(Compiling (entry function|function) '([^']+)' for '([^']+)')");
  static const std::regex props(R"(Function properties for (\S+))");
  static const std::regex frame(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex barriers(R"(used (\d+) barriers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  static const std::regex cmem(R"((\d+) bytes cmem\[\d+\])");
  static const std::regex lmem(R"((\d+) bytes lmem)");
  static const std::regex cumulative(R"((\d+) bytes cumulative stack size)");
  static const std::regex compile_time(R"(Compile time = ([0-9.]+) ms)");
  static const std::regex code(R"(\((C\d{4})\))");

  FunctionResources* current = nullptr;
  auto function_named = [&](const std::string& name) -> FunctionResources* {
    for (auto& f : out.functions)
      if (f.name == name) return &f;
    out.functions.push_back(FunctionResources{});
    out.functions.back().name = name;
    return &out.functions.back();
  };
  for (auto raw : split(log, '\n')) {
    std::string line(trim(raw));
    // nvJitLink adds its linker's summary ("info    : Function properties for 'k':"); it
    // describes the linked image, not what ptxas reported, so it is left out.
    if (line.empty() || starts_with(line, "info")) continue;
    std::smatch m;
    for (auto it = std::sregex_iterator(line.begin(), line.end(), code); it != std::sregex_iterator(); ++it)
      out.info_codes.push_back((*it)[1]);
    if (std::regex_search(line, m, compiling)) {
      current = function_named(m[2]);
      current->is_entry = m[1] == "entry function";
      current->arch = m[3];
      continue;
    }
    if (std::regex_search(line, m, props)) {
      current = function_named(m[1]);
      continue;
    }
    if (std::regex_search(line, m, frame) && current) {
      current->stack_frame = to_int(m.str(1));
      current->spill_stores = to_int(m.str(2));
      current->spill_loads = to_int(m.str(3));
      continue;
    }
    if (std::regex_search(line, m, used) && current) {
      current->registers = to_int(m.str(1));
      if (std::regex_search(line, m, barriers)) current->barriers = to_int(m.str(1));
      if (std::regex_search(line, m, smem)) current->shared_bytes = to_int(m.str(1));
      if (std::regex_search(line, m, lmem)) current->local_bytes = to_int(m.str(1));
      if (std::regex_search(line, m, cumulative)) current->cumulative_stack = to_int(m.str(1));
      current->const_bytes = 0;
      for (auto it = std::sregex_iterator(line.begin(), line.end(), cmem); it != std::sregex_iterator(); ++it)
        current->const_bytes += to_int((*it)[1].str());
      continue;
    }
    if (std::regex_search(line, m, compile_time) && current) {
      current->compile_ms = std::stod(m.str(1));
      continue;
    }
    Diagnostic d;
    d.check_id = "ptxas";
    if (std::regex_match(line, m, located)) {
      d.severity = severity_of(m.str(3));
      d.loc.line = static_cast<uint32_t>(to_int(m.str(2)));
      d.message = m.str(4);
      d.loc.col = column_for(d.message, line_of(source, d.loc.line));
    } else if (std::regex_match(line, m, plain)) {
      d.severity = severity_of(m.str(1));
      d.message = m.str(2);
      if (d.message == "Ptx assembly aborted due to errors") continue;  // always last; says nothing new
      if (d.severity == Severity::note && !std::regex_search(d.message, code)) continue;  // plain -v chatter
    } else {
      continue;
    }
    if (!d.message.empty() && d.message.back() == '.') d.message.pop_back();
    out.diags.add(std::move(d));
  }
  out.diags.sort_by_location();  // the JIT log is not in line order
}

}  // namespace ptxforge::toolchain
