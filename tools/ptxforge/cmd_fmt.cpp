// ptxforge fmt: canonical PTX, optionally with a rewritten header. Comments are kept where they
// were: a candidate's launch spec lives in its `// @launch` lines.
#include <iostream>

#include "cli_parse.h"
#include "ptx/parser.h"
#include "ptx/printer.h"
#include "ptx/rewrite.h"
#include "util/text.h"

namespace ptxforge::cli {

int cmd_fmt(const std::vector<std::string>& args) {
  CLI::App app("Print canonical PTX (comments kept); optionally retarget it, change its .version, or add a missing "
               "header", "fmt");
  std::string file, retarget, version, output;
  bool add_header = false, in_place = false;
  app.add_option("file", file, "PTX file ('-' for stdin)")->required();
  app.add_option("--retarget", retarget, "rewrite .target (e.g. sm_90a); fails if an instruction needs more");
  app.add_option("--ptx-version", version, "rewrite .version (e.g. 8.0); fails if an instruction needs more");
  app.add_flag("--add-header", add_header,
               "add .version/.target/.address_size where missing, with the lowest version the body needs");
  app.add_option("-o,--output", output, "write here instead of stdout");
  app.add_flag("-i,--in-place", in_place, "rewrite the file itself");
  if (int rc = parse_args(app, args); rc >= 0) return rc;
  auto usage_error = [](std::string_view msg) {
    std::cerr << "ptxforge fmt: " << msg << "\nrun 'ptxforge help fmt' for usage\n";
    return kExitUsage;
  };
  if (in_place && !output.empty()) return usage_error("-i rewrites the file itself; give -i or -o, not both");
  if (in_place && file == "-") return usage_error("-i needs a file: standard input cannot be rewritten in place");

  auto text = read_input(file);
  if (!text) {
    std::cerr << "ptxforge fmt: " << text.error().message << "\n";
    return kExitUsage;
  }
  SourceText src(file == "-" ? "<stdin>" : file, *text);
  Diagnostics diags;
  ptx::Module m = ptx::parse(*text, diags);
  if (diags.has_errors()) {
    std::cerr << render_text(diags, src);
    std::cerr << "ptxforge fmt: not formatting a module with syntax errors\n";
    return kExitInputErrors;
  }
  if (add_header || !retarget.empty() || !version.empty()) {
    ptx::HeaderChange change;
    if (!retarget.empty()) change.target = retarget;
    if (!version.empty()) change.version = version;
    change.add_header = add_header;
    Diagnostics rd;
    if (!ptx::rewrite_header(m, change, rd)) {
      std::cerr << render_text(rd, src);
      return kExitInputErrors;
    }
  }
  std::string out = ptx::print(m);
  if (in_place) output = file;
  if (output.empty()) {
    std::cout << out;
  } else if (auto st = write_file(output, out); !st) {
    std::cerr << "ptxforge fmt: " << st.error().message << "\n";
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace ptxforge::cli
