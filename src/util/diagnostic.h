// One diagnostic style for the whole project: our front end's findings and ptxas's messages
// become the same records, printed as `file:line:col: error: message [check-id]` with the
// source line, a caret, notes and a fix-it hint, or emitted as JSON for agents and editors.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxforge {

// 1-based line and column; line 0 means "no position" (a whole-file finding).
struct SourceLoc {
  uint32_t line = 0;
  uint32_t col = 0;
  // AST equality is structural: where a node came from does not make two trees different.
  bool operator==(const SourceLoc&) const { return true; }
};

enum class Severity { error, warning, note };
std::string_view severity_name(Severity s);

struct DiagnosticNote {
  SourceLoc loc;
  std::string message;
};

struct FixIt {
  SourceLoc loc;
  uint32_t length = 0;       // characters replaced at loc; 0 inserts
  std::string replacement;
};

struct Diagnostic {
  Severity severity = Severity::error;
  SourceLoc loc;
  uint32_t length = 1;       // characters under the caret
  std::string message;
  std::string check_id;      // e.g. "undeclared-reg"; "ptxas" for messages from ptxas
  std::string hint;          // a sentence on how to fix it, may be empty
  std::optional<FixIt> fixit;
  std::vector<DiagnosticNote> notes;
};

// A source text with a line index, so diagnostics can quote the offending line.
class SourceText {
 public:
  SourceText(std::string name, std::string_view text);
  const std::string& name() const { return name_; }
  std::string_view text() const { return text_; }
  std::string_view line(uint32_t line_no) const;  // without the newline; "" if out of range
  uint32_t line_count() const { return static_cast<uint32_t>(starts_.size()); }

 private:
  std::string name_;
  std::string_view text_;
  std::vector<uint32_t> starts_;
};

class Diagnostics {
 public:
  void add(Diagnostic d) { list_.push_back(std::move(d)); }
  Diagnostic& error(SourceLoc loc, std::string message, std::string check_id);
  Diagnostic& warning(SourceLoc loc, std::string message, std::string check_id);

  const std::vector<Diagnostic>& list() const { return list_; }
  std::vector<Diagnostic>& list() { return list_; }
  size_t error_count() const;
  size_t warning_count() const;
  bool has_errors() const { return error_count() > 0; }
  bool empty() const { return list_.empty(); }
  void sort_by_location();  // stable: ties keep the order they were found in
  // Caps the list (huge garbage files can produce millions) and says how many were dropped.
  void cap(size_t max_count);

 private:
  std::vector<Diagnostic> list_;
};

// Text rendering: diagnostics, each with its quoted line and caret, then a summary line.
std::string render_text(const Diagnostics& diags, const SourceText& src, bool color = false);
std::string render_one(const Diagnostic& d, const SourceText& src, bool color = false);
// JSON: {"file":..., "errors":N, "warnings":N, "diagnostics":[...]}.
std::string render_json(const Diagnostics& diags, const SourceText& src);

}  // namespace ptxforge
