#include "ptx/front_end.h"

#include "ptx/parser.h"

namespace ptxforge::ptx {

CheckResult check_source(std::string_view text, const ValidateOptions& opts) {
  CheckResult r;
  r.module = parse(text, r.diags);
  // Fences and prose lines were skipped by the lexer, so the PTX around them is still worth
  // checking; after a real syntax error the tree is partial and checks would only add noise.
  bool syntax_errors = false;
  for (auto& d : r.diags.list())
    if (d.severity == Severity::error && d.check_id != "markdown-fence" && d.check_id != "prose-in-ptx" &&
        d.check_id != "preprocessor")
      syntax_errors = true;
  if (!syntax_errors) validate(r.module, r.diags, opts);
  r.diags.sort_by_location();
  r.diags.cap(200);
  return r;
}

}  // namespace ptxforge::ptx
