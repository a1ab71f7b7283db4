// The PTX printer: canonical text for a module. One statement per line, bodies indented by a
// tab, operands separated by ", ". print(parse(x)) parses back to an AST equal to parse(x),
// and ptxas assembles it to the same resources.
#pragma once

#include <string>

#include "ptx/ast.h"

namespace ptxforge::ptx {

std::string print(const Module& m);
std::string print(const Instruction& ins);
std::string print(const Operand& op);
std::string print(const Expr& e);
std::string print(const VarDecl& d);
std::string print(const Directive& d);

}  // namespace ptxforge::ptx
