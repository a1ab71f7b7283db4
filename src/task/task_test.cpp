#include <gtest/gtest.h>

#include "ptx/parser.h"
#include "task/expr.h"
#include "task/launch_spec.h"
#include "task/task_spec.h"
#include "util/text.h"

namespace ptxforge::task {
namespace {

int64_t eval_int(std::string_view text, Bindings b = {}) {
  auto e = SizeExpr::parse(text);
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message);
  auto v = e->evaluate_int(b, true);
  EXPECT_TRUE(v.ok()) << (v.ok() ? "" : v.error().message);
  return v.ok() ? *v : -999;
}

TEST(SizeExpr, ArithmeticFollowsC) {
  EXPECT_EQ(eval_int("ceil_div(n, 256)", {{"n", 1000}}), 4);
  EXPECT_EQ(eval_int("ceil_div(n, 256)", {{"n", 1024}}), 4);
  EXPECT_EQ(eval_int("2 + 3 * 4 - 10 / 3 % 2"), 13);
  EXPECT_EQ(eval_int("-(2 - 5) * 2"), 6);
  EXPECT_EQ(eval_int("min(m, n) + max(m, n)", {{"m", 3}, {"n", 9}}), 12);
  EXPECT_EQ(eval_int("round_up(1000, 64)"), 1024);
  EXPECT_EQ(eval_int("log2(4096) + next_pow2(1000)"), 12 + 1024);
  EXPECT_EQ(eval_int("16_777_216"), 16777216);
  auto f = SizeExpr::parse("alpha * 2");
  ASSERT_TRUE(f.ok());
  auto v = f->evaluate({{"alpha", 1.25}});
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(v->is_int);
  EXPECT_DOUBLE_EQ(v->d, 2.5);
}

TEST(SizeExpr, ErrorsNameTheColumnAndTheProblem) {
  auto e = SizeExpr::parse("ceil_dv(n, 256)");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("column 1"), std::string::npos);
  EXPECT_NE(e.error().message.find("did you mean 'ceil_div'"), std::string::npos);
  EXPECT_NE(SizeExpr::parse("n +").error().message.find("ends too early"), std::string::npos);
  EXPECT_NE(SizeExpr::parse("(n").error().message.find("expected ')'"), std::string::npos);
  EXPECT_NE(SizeExpr::parse("min(n)").error().message.find("takes 2 arguments"), std::string::npos);
  auto ok = SizeExpr::parse("n / k");
  ASSERT_TRUE(ok.ok());
  EXPECT_NE(ok->evaluate({{"n", 1}}).error().message.find("unknown size symbol 'k'"), std::string::npos);
  EXPECT_NE(ok->evaluate({{"n", 1}, {"k", 0}}).error().message.find("division by zero"), std::string::npos);
  EXPECT_FALSE(SizeExpr::parse("n - 10")->evaluate_int({{"n", 1}}).ok());  // negative size
  EXPECT_EQ(SizeExpr::parse("m * k + n")->symbols(), (std::vector<std::string>{"m", "k", "n"}));
}

TEST(Dim3Expr, ShapesWithNestedCalls) {
  auto d = Dim3Expr::parse("(ceil_div(n, 256), 2, 1)");
  ASSERT_TRUE(d.ok());
  auto v = d->evaluate({{"n", 1000}});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, (std::array<int64_t, 3>{4, 2, 1}));
  EXPECT_EQ(*Dim3Expr::parse("128")->evaluate({}), (std::array<int64_t, 3>{128, 1, 1}));
  EXPECT_FALSE(Dim3Expr::parse("(1, 2, 3, 4)").ok());
  EXPECT_FALSE(Dim3Expr::parse("(n - n, 1, 1)")->evaluate({{"n", 5}}).ok());  // a zero dimension
}

const char* kTask = R"TOML(name = "t"
description = "d"
entry = "k"
[[param]]
name = "x"
dtype = "f32"
count = "n"
role = "in"
[[param]]
name = "y"
dtype = "f32"
count = "n"
role = "out"
[[param]]
name = "n"
kind = "scalar"
dtype = "u32"
value = "n"
[[sizes]]
name = "small"
n = 100
[[sizes]]
name = "held"
shown = false
n = 7
[reference]
entry = "k_ref"
grid = "(ceil_div(n, 256), 1, 1)"
block = "(256, 1, 1)"
[tolerance]
rtol = 1e-3
[roofline]
bytes = "8 * n"
flops = "n"
)TOML";

TEST(TaskSpec, ParsesParamsSizesReferenceTolerance) {
  auto t = parse_task(kTask, "task.toml", "/tmp/t");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->params.size(), 3u);
  EXPECT_EQ(t->params[1].role, Role::out);
  EXPECT_EQ(t->params[2].kind, Param::scalar);
  EXPECT_EQ(t->params[2].param_bytes(), 4u);
  EXPECT_EQ(t->size_sets(false).size(), 1u);
  EXPECT_EQ(t->size_sets(true).size(), 2u);
  EXPECT_EQ(t->reference.entry, "k_ref");
  EXPECT_DOUBLE_EQ(t->tolerance_for("y").rtol, 1e-3);
  EXPECT_DOUBLE_EQ(t->tolerance_for("y").atol, 1e-6);  // the default
}

TEST(TaskSpec, ErrorsCarryFileLineAndAllProblems) {
  std::string bad = kTask;
  const std::string from = "dtype = \"f32\"\ncount = \"n\"\nrole = \"out\"";
  bad.replace(bad.find(from), from.size(), "dtype = \"f33\"\ncount = \"m\"\nrole = \"output\"");
  auto t = parse_task(bad, "task.toml", "/tmp/t");
  ASSERT_FALSE(t.ok());
  const std::string& m = t.error().message;
  EXPECT_NE(m.find("task.toml:11:9: error: unknown dtype 'f33'"), std::string::npos) << m;
  EXPECT_NE(m.find("unknown role 'output'"), std::string::npos) << m;
  EXPECT_NE(m.find("symbol 'm' is not set in size set 'small'; did you mean 'n'?"), std::string::npos) << m;
  EXPECT_NE(m.find("^"), std::string::npos) << "quotes the line with a caret";
  auto syntax = parse_task("name = \n", "task.toml", "/tmp/t");
  ASSERT_FALSE(syntax.ok());
  EXPECT_NE(syntax.error().message.find("task.toml:1:"), std::string::npos);
}

// kTask with `from` replaced by `to` (the first occurrence), parsed.
Result<Task> edited(const std::string& from, const std::string& to) {
  std::string text = kTask;
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return parse_task(text, "task.toml", "/tmp/t");
}

std::string error_of(const Result<Task>& t) { return t ? std::string("(loaded)") : t.error().message; }

TEST(TaskKeys, AMisspeltTableIsAnErrorAtItsKeyWithAGuess) {
  auto t = edited("[tolerance]", "[tolerence]");
  ASSERT_FALSE(t);
  EXPECT_NE(error_of(t).find("task.toml:30:2: error: unknown key 'tolerence' in the task (top level); did you mean 'tolerance'?"),
            std::string::npos)
      << error_of(t);
}

TEST(TaskKeys, UnknownKeysInEveryFixedTableAreErrors) {
  struct Case {
    const char* from;
    const char* to;
    const char* expect;
  } cases[] = {
      {"rtol = 1e-3", "rtoll = 1e-3", "unknown key 'rtoll' in [tolerance]; did you mean 'rtol'?"},
      {"block = \"(256, 1, 1)\"", "block = \"(256, 1, 1)\"\nblok = 3", "unknown key 'blok' in [reference]; did you mean 'block'?"},
      {"flops = \"n\"", "flops = \"n\"\nflop = \"n\"", "unknown key 'flop' in [roofline]; did you mean 'flops'?"},
      {"role = \"in\"", "role = \"in\"\ninit_ = \"zeros\"", "unknown key 'init_' in a buffer [[param]]; did you mean 'init'?"},
      {"role = \"in\"", "role = \"in\"\nvalue = \"n\"", "'value' is not a key of a buffer parameter (it belongs to kind = \"scalar\")"},
      {"entry = \"k\"", "entry = \"k\"\ndescrption = \"x\"", "unknown key 'descrption' in the task (top level); did you mean 'description'?"},
      {"rtol = 1e-3", "rtol = 1e-3\n[tolerance.y]\natool = 1", "unknown key 'atool' in [tolerance.y]; did you mean 'atol'?"},
  };
  for (auto& c : cases) {
    auto t = edited(c.from, c.to);
    EXPECT_NE(error_of(t).find(c.expect), std::string::npos) << c.to << "\n" << error_of(t);
  }
}

TEST(TaskKeys, ASizeSymbolNoExpressionUsesIsAnError) {
  auto t = edited("n = 100", "n = 100\nnn = 5");
  EXPECT_NE(error_of(t).find("task.toml:22:1: error: size 'nn' in size set 'small' is not used by any expression"),
            std::string::npos)
      << error_of(t);
  EXPECT_NE(error_of(t).find("did you mean 'n'?"), std::string::npos) << error_of(t);
}

TEST(TaskKeys, BaselineArgumentsAreCheckedPerLibrary) {
  auto t = edited("[tolerance]", "[baseline]\nlibrary = \"cublas_sgemv\"\nrows = \"n\"\ncols = \"1\"\na = \"x\"\nx = \"x\"\nz = \"y\"\n[tolerance]");
  EXPECT_NE(error_of(t).find("unknown key 'z' in [baseline] for cublas_sgemv"), std::string::npos) << error_of(t);
  EXPECT_NE(error_of(t).find("[baseline] for cublas_sgemv needs 'y'"), std::string::npos) << error_of(t);
  auto bad_buffer = edited("[tolerance]", "[baseline]\nlibrary = \"cublas_sgemv\"\nrows = \"n\"\ncols = \"1\"\na = \"x\"\nx = \"q\"\ny = \"y\"\n[tolerance]");
  EXPECT_NE(error_of(bad_buffer).find("baseline 'x' must name a buffer parameter, not 'q'"), std::string::npos) << error_of(bad_buffer);
}

// A shipped task's file with the first `from` replaced by `to`, parsed.
Result<Task> shipped_with(const std::string& task_dir, const std::string& from, const std::string& to) {
  auto text = read_file(std::string(PTXFORGE_SOURCE_DIR) + "/tasks/" + task_dir + "/task.toml");
  EXPECT_TRUE(text.ok());
  std::string s = text.ok() ? *text : "";
  if (s.find(from) == std::string::npos) ADD_FAILURE() << "no '" << from << "' in " << task_dir;
  else s.replace(s.find(from), from.size(), to);
  return parse_task(s, "task.toml", "/tmp/t");
}

// The shipped fp16 GEMM's task with its [baseline] or a buffer's dtype changed.
Result<Task> hgemm_with(const std::string& from, const std::string& to) {
  return shipped_with("level2/hgemm_mma", from, to);
}

TEST(TaskKeys, ALtMatmulBaselineTakesOnlyTypesCublasLtComputes) {
  EXPECT_TRUE(hgemm_with("b_major = \"n\"", "b_major = \"n\"").ok()) << error_of(hgemm_with("", ""));
  EXPECT_TRUE(hgemm_with("dtype = \"f32\"\ncount = \"m * n\"", "dtype = \"f16\"\ncount = \"m * n\"").ok())
      << "f16 operands may write an f16 C";
  auto mixed = hgemm_with("dtype = \"f16\"\ncount = \"k * n\"", "dtype = \"bf16\"\ncount = \"k * n\"");
  EXPECT_NE(error_of(mixed).find("cublaslt_matmul does not take a f16, b bf16, c f32"), std::string::npos) << error_of(mixed);
  auto narrow = hgemm_with("dtype = \"f32\"\ncount = \"m * n\"", "dtype = \"bf16\"\ncount = \"m * n\"");
  EXPECT_NE(error_of(narrow).find("does not take a f16, b f16, c bf16"), std::string::npos) << error_of(narrow);
  auto fp8 = hgemm_with("dtype = \"f16\"\ncount = \"m * k\"", "dtype = \"e4m3\"\ncount = \"m * k\"");
  EXPECT_FALSE(fp8.ok()) << "an e4m3 A with an f16 B is no combination";
  std::string both = *read_file(std::string(PTXFORGE_SOURCE_DIR) + "/tasks/level2/hgemm_mma/task.toml");
  for (auto from : {"dtype = \"f16\"\ncount = \"m * k\"", "dtype = \"f16\"\ncount = \"k * n\""}) {
    std::string f = from;
    both.replace(both.find(f), f.size(), "dtype = \"e4m3\"" + f.substr(f.find('\n')));
  }
  auto nn = parse_task(both, "task.toml", "/tmp/t");
  EXPECT_NE(error_of(nn).find("fp8 operands only with b_major = \"k\""), std::string::npos) << error_of(nn);
  both.replace(both.find("b_major = \"n\""), 13, "b_major = \"k\"");
  EXPECT_TRUE(parse_task(both, "task.toml", "/tmp/t").ok()) << error_of(parse_task(both, "task.toml", "/tmp/t"));
  auto bad_major = hgemm_with("b_major = \"n\"", "b_major = \"t\"");
  EXPECT_NE(error_of(bad_major).find("b_major is \"n\""), std::string::npos) << error_of(bad_major);
}

// The shipped attention task with its [baseline] or a buffer edited.
Result<Task> attention_with(const std::string& from, const std::string& to) {
  return shipped_with("level3/flash_attn_fwd", from, to);
}

TEST(TaskKeys, RequiredInstructionsMayNameAlternatives) {
  auto t = attention_with("", "");
  ASSERT_TRUE(t.ok()) << error_of(t);
  EXPECT_EQ(t->required_instructions, (std::vector<std::string>{"mma.sync", "wgmma.mma_async"}));
  ASSERT_EQ(t->required_groups.size(), 1u);
  EXPECT_EQ(t->required_groups[0], (std::vector<std::string>{"mma.sync", "wgmma.mma_async"}));
  auto two =
      attention_with("[\"mma.sync | wgmma.mma_async\"]", "[\"mma.sync|wgmma.mma_async\", \"ldmatrix\", \"mma.sync\"]");
  EXPECT_NE(error_of(two).find("'mma.sync' is named twice in required_instructions"), std::string::npos) << error_of(two);
  auto split = attention_with("[\"mma.sync | wgmma.mma_async\"]", "[\"mma.sync|wgmma.mma_async\", \"ldmatrix\"]");
  ASSERT_TRUE(split.ok()) << error_of(split);
  EXPECT_EQ(split->required_instructions, (std::vector<std::string>{"mma.sync", "wgmma.mma_async", "ldmatrix"}));
  EXPECT_EQ(split->required_groups.size(), 2u);
  auto dangling = attention_with("[\"mma.sync | wgmma.mma_async\"]", "[\"mma.sync |\"]");
  EXPECT_NE(error_of(dangling).find("'mma.sync |' is not an opcode family or alternatives of them"), std::string::npos)
      << error_of(dangling);
  auto spaced = attention_with("[\"mma.sync | wgmma.mma_async\"]", "[\"mma sync\"]");
  EXPECT_NE(error_of(spaced).find("'mma sync' is not an opcode family"), std::string::npos) << error_of(spaced);
  auto one_floor = attention_with("\"wgmma.mma_async\" = \"0.9 * b * h * s * s * 256 / (1 + causal)\"", "");
  EXPECT_NE(error_of(one_floor).find("the alternatives mma.sync | wgmma.mma_async need a floor each, or none of them"),
            std::string::npos)
      << error_of(one_floor);
  auto number = attention_with("[\"mma.sync | wgmma.mma_async\"]", "[3]");
  EXPECT_NE(error_of(number).find("required_instructions lists opcode families as strings"), std::string::npos)
      << error_of(number);
}

TEST(TaskKeys, ACudnnAttentionBaselineNamesItsSizesAndBuffers) {
  auto shipped = attention_with("", "");
  ASSERT_TRUE(shipped.ok()) << error_of(shipped);
  ASSERT_TRUE(shipped->baseline);
  EXPECT_EQ(shipped->baseline->kind, BaselineKind::cudnn_sdpa);
  EXPECT_EQ(shipped->baseline->args.at("seq"), "s") << "a size expression, kept as text";
  EXPECT_EQ(shipped->baseline->args.at("k"), "k") << "'k' names a buffer here, not a GEMM's size";
  auto unbound = attention_with("lse = \"lse\"\n\n#", "\n#");
  EXPECT_NE(error_of(unbound).find("the output 'lse' must be one of them"), std::string::npos)
      << "lse may be left out only where the task has no such output: " << error_of(unbound);
  auto as_number = attention_with("head_dim = \"128\"", "head_dim = 128\nscale = 0.125");
  ASSERT_TRUE(as_number.ok()) << error_of(as_number);
  EXPECT_EQ(as_number->baseline->args.at("scale"), "0.125") << "a number is an expression too";
  EXPECT_EQ(as_number->baseline->args.at("head_dim"), "128");
  auto input_o = attention_with("o = \"o\"", "o = \"q\"");
  EXPECT_NE(error_of(input_o).find("cudnn_sdpa writes 'q': it must be an output buffer"), std::string::npos)
      << error_of(input_o);
  auto numeric_buffer = attention_with("v = \"v\"", "v = 3");
  EXPECT_NE(error_of(numeric_buffer).find("baseline 'v' names a buffer parameter: give its name as a string"),
            std::string::npos)
      << error_of(numeric_buffer);
  auto no_seq = attention_with("seq = \"s\"\n", "");
  EXPECT_NE(error_of(no_seq).find("[baseline] for cudnn_sdpa needs 'seq'"), std::string::npos) << error_of(no_seq);
  auto typo = attention_with("causal = \"causal\"", "casual = \"causal\"");
  EXPECT_NE(error_of(typo).find("unknown key 'casual' in [baseline] for cudnn_sdpa; did you mean 'causal'?"),
            std::string::npos)
      << error_of(typo);
  auto bad_expr = attention_with("seq = \"s\"", "seq = \"s +\"");
  EXPECT_FALSE(bad_expr.ok()) << "a size key is parsed as an expression";
  auto not_buffer = attention_with("v = \"v\"", "v = \"s\"");
  EXPECT_NE(error_of(not_buffer).find("baseline 'v' must name a buffer parameter, not 's'"), std::string::npos)
      << error_of(not_buffer);
  auto mixed = attention_with("name = \"v\"\ndtype = \"bf16\"", "name = \"v\"\ndtype = \"f16\"");
  EXPECT_NE(error_of(mixed).find("cudnn_sdpa takes q, k, v and o of one type: q is bf16, v is f16"), std::string::npos)
      << error_of(mixed);
  auto wide_lse = attention_with("name = \"lse\"\ndtype = \"f32\"", "name = \"lse\"\ndtype = \"bf16\"");
  EXPECT_NE(error_of(wide_lse).find("cudnn_sdpa writes lse as f32, not bf16"), std::string::npos) << error_of(wide_lse);
}

// alpha (C = alpha A B) is an optional expression of the sizes; its symbols count as used.
TEST(TaskKeys, ALtMatmulBaselineTakesAnAlphaExpression) {
  auto t = hgemm_with("b_major = \"n\"", "b_major = \"n\"\nalpha = \"2 * m / m\"");
  ASSERT_TRUE(t.ok()) << error_of(t);
  ASSERT_TRUE(t->baseline);
  EXPECT_EQ(t->baseline->args.at("alpha"), "2 * m / m");
  auto unbound = hgemm_with("b_major = \"n\"", "b_major = \"n\"\nalpha = \"scale\"");
  EXPECT_FALSE(unbound.ok()) << "alpha names a symbol no size set binds";
}

TEST(TaskKeys, MinExecutedNamesARequiredFamilyAndAnExpression) {
  auto t = hgemm_with("", "");
  ASSERT_TRUE(t.ok()) << error_of(t);
  ASSERT_EQ(t->min_executed.count("mma.sync"), 1u);
  auto v = t->min_executed.at("mma.sync").evaluate({{"m", 64}, {"n", 64}, {"k", 64}});
  ASSERT_TRUE(v.ok());
  EXPECT_DOUBLE_EQ(v->as_double(), 0.9 * 64 * 64 * 64) << "90% of the multiply-adds";
  auto stray = hgemm_with("\"ldmatrix\" = ", "\"wgmma.mma_async\" = ");
  EXPECT_NE(error_of(stray).find("[min_work] names 'wgmma.mma_async', which is not in required_instructions"),
            std::string::npos)
      << error_of(stray);
  auto bad = hgemm_with("\"0.9 * m * n * k\"", "\"m * n * q\"");
  EXPECT_NE(error_of(bad).find("q"), std::string::npos) << error_of(bad);
}

// A floor written as warp executions, read as multiply-adds, would be thousands of times laxer:
// the old key is refused, naming the new one, rather than reinterpreted.
TEST(TaskKeys, TheOldExecutionFloorKeyIsRefusedNamingMinWork) {
  auto old = hgemm_with("[min_work]", "[min_executed]");
  EXPECT_NE(error_of(old).find("[min_executed] (warp executions) is replaced by [min_work]"), std::string::npos)
      << error_of(old);
}

TEST(TaskKeys, SanitizeSizesNameSizeSets) {
  auto t = parse_task(std::string("sanitize_sizes = [\"held\"]\n") + kTask, "task.toml", ".");
  ASSERT_TRUE(t.ok()) << error_of(t);
  EXPECT_EQ(t->sanitize_sizes, (std::vector<std::string>{"held"}));
  auto typo = parse_task(std::string("sanitize_sizes = [\"smal\"]\n") + kTask, "task.toml", ".");
  EXPECT_NE(error_of(typo).find("task.toml:1:19: error: sanitize_sizes names 'smal', which is not a size set; did you "
                                "mean 'small'?"),
            std::string::npos)
      << error_of(typo);
  auto scalar = parse_task(std::string("sanitize_sizes = \"small\"\n") + kTask, "task.toml", ".");
  EXPECT_NE(error_of(scalar).find("sanitize_sizes is a list of size-set names"), std::string::npos) << error_of(scalar);
  auto old = parse_task(std::string("racecheck = true\n") + kTask, "task.toml", ".");
  EXPECT_NE(error_of(old).find("unknown key 'racecheck'"), std::string::npos) << error_of(old);
}

TEST(TaskKeys, DeviceHeapBytesIsAWholeNumberAndZeroByDefault) {
  auto none = parse_task(kTask, "task.toml", ".");
  ASSERT_TRUE(none.ok()) << error_of(none);
  EXPECT_EQ(none->device_heap_bytes, 0u);
  auto some = parse_task(std::string("device_heap_bytes = 1_048_576\n") + kTask, "task.toml", ".");
  ASSERT_TRUE(some.ok()) << error_of(some);
  EXPECT_EQ(some->device_heap_bytes, 1048576u);
  for (const char* bad : {"-1", "1.5", "\"8 MiB\"", "17179869185"}) {
    auto t = parse_task(std::string("device_heap_bytes = ") + bad + "\n" + kTask, "task.toml", ".");
    EXPECT_NE(error_of(t).find("task.toml:1:21: error: device_heap_bytes is a whole number of bytes from 0 to"),
              std::string::npos)
        << bad << ": " << error_of(t);
  }
  auto typo = parse_task(std::string("device_heap_byte = 1\n") + kTask, "task.toml", ".");
  EXPECT_NE(error_of(typo).find("did you mean 'device_heap_bytes'"), std::string::npos) << error_of(typo);
}

TEST(TaskRoofline, IsRequiredAndItsBytesMustBePositiveOnEverySizeSet) {
  auto missing = edited("[roofline]\nbytes = \"8 * n\"\nflops = \"n\"\n", "");
  EXPECT_NE(error_of(missing).find("missing [roofline] table"), std::string::npos) << error_of(missing);
  auto no_flops = edited("flops = \"n\"\n", "");
  EXPECT_NE(error_of(no_flops).find("missing key 'flops'"), std::string::npos) << error_of(no_flops);
  auto zero = edited("bytes = \"8 * n\"", "bytes = \"8 * n - 800\"");
  EXPECT_NE(error_of(zero).find("roofline bytes are 0 on size set 'small'"), std::string::npos) << error_of(zero);
  auto tensor = edited("flops = \"n\"", "flops = \"n\"\ntensor_cores = \"bf16\"");
  ASSERT_TRUE(tensor) << error_of(tensor);
  EXPECT_EQ(tensor->tensor_cores, TensorCores::f16);
  EXPECT_NE(error_of(edited("flops = \"n\"", "flops = \"n\"\ntensor_cores = \"fp4\"")).find("unknown tensor_cores 'fp4'"),
            std::string::npos);
}

TEST(TaskSizes, ASizeSetMayOverrideAnInputsInit) {
  auto t = edited("n = 100", "n = 100\ninit.x = \"plant_max(sorted(uniform(0, 1)), end)\"");
  ASSERT_TRUE(t) << error_of(t);
  const Param& x = *t->find_param("x");
  const Distribution& small = t->init_for(t->sizes[0], x);
  EXPECT_EQ(small.order, Distribution::Order::sorted);
  EXPECT_EQ(small.plant, Distribution::Plant::max);
  EXPECT_EQ(t->init_for(t->sizes[1], x).kind, Distribution::uniform) << "the other size set keeps the param's own";
  EXPECT_EQ(t->init_for(t->sizes[1], x).order, Distribution::Order::none);
  auto not_input = edited("n = 100", "n = 100\ninit.y = \"zeros\"");
  EXPECT_NE(error_of(not_input).find("init for 'y', which is not an input buffer"), std::string::npos) << error_of(not_input);
  auto typo = edited("n = 100", "n = 100\ninit.xx = \"zeros\"");
  EXPECT_NE(error_of(typo).find("did you mean 'x'?"), std::string::npos) << error_of(typo);
  auto bad = edited("n = 100", "n = 100\ninit.x = \"sorted(gauss(0, 1))\"");
  EXPECT_NE(error_of(bad).find("unknown distribution 'gauss'"), std::string::npos) << error_of(bad);
  auto out_init = edited("role = \"out\"", "role = \"out\"\ninit = \"ones\"");
  EXPECT_NE(error_of(out_init).find("its init is never used"), std::string::npos) << error_of(out_init);
  auto unsigned_normal = edited("dtype = \"f32\"", "dtype = \"u8\"\ninit = \"normal(0, 1)\"");
  EXPECT_NE(error_of(unsigned_normal).find("cannot hold"), std::string::npos) << error_of(unsigned_normal);
}

TEST(TaskTolerance, IntegerOutputsTakeNoRtolOrAtol) {
  auto t = edited("dtype = \"f32\"\ncount = \"n\"\nrole = \"out\"", "dtype = \"s64\"\ncount = \"n\"\nrole = \"out\"");
  ASSERT_TRUE(t) << error_of(t);
  EXPECT_EQ(t->params[1].dtype, DType::i64);
  auto tol = edited("dtype = \"f32\"\ncount = \"n\"\nrole = \"out\"", "dtype = \"u32\"\ncount = \"n\"\nrole = \"out\"");
  ASSERT_TRUE(tol);
  auto with = edited("rtol = 1e-3", "rtol = 1e-3\n[tolerance.y]\natol = 1");
  ASSERT_TRUE(with) << "a float output takes atol";
  std::string text = kTask;
  const std::string out_f32 = "dtype = \"f32\"\ncount = \"n\"\nrole = \"out\"";
  text.replace(text.find(out_f32), out_f32.size(), "dtype = \"u32\"\ncount = \"n\"\nrole = \"out\"");
  text += "[tolerance.y]\natol = 1\n";
  auto bad = parse_task(text, "task.toml", "/tmp/t");
  EXPECT_NE(error_of(bad).find("integer outputs are compared exactly"), std::string::npos) << error_of(bad);
}

TEST(Distribution, ParsesKnownFormsAndRejectsOthers) {
  EXPECT_EQ(Distribution::parse("normal(0, 2)")->kind, Distribution::normal);
  EXPECT_EQ(Distribution::parse("int(0, 255)")->b, 255);
  EXPECT_EQ(Distribution::parse("zeros")->kind, Distribution::zeros);
  EXPECT_FALSE(Distribution::parse("gauss(0, 1)").ok());
  EXPECT_FALSE(Distribution::parse("uniform(1, 0)").ok());
}

const char* kPtx = R"PTX(// @launch grid=(ceil_div(n, 256), 1, 1) block=(256, 1, 1) smem=0
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 x, .param .u64 y, .param .u32 n)
{
  ret;
}
)PTX";

ptx::Module parse_module(std::string_view text) {
  Diagnostics d;
  return ptx::parse(text, d);
}

TEST(LaunchSpec, CommentLinesFillDefaultsAndMatchTheEntry) {
  auto task = parse_task(kTask, "task.toml", "/tmp/t");
  auto spec = parse_launch_comments(kPtx, "c.ptx");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  ASSERT_TRUE(check_launch_spec(*spec, *task, parse_module(kPtx), "c.ptx").ok());
  EXPECT_EQ(spec->launches[0].entry, "k");
  EXPECT_EQ(spec->launches[0].args, (std::vector<std::string>{"x", "y", "n"}));
}

TEST(LaunchSpec, ExpressionsMayHoldSpaces) {
  auto task = parse_task(kTask, "task.toml", "/tmp/t");
  for (const char* line : {"// @launch grid=(32 + 2 * ceil_div(n, 8192), 1, 1) block=(256,1,1)\n",
                           "// @launch grid = (ceil_div(n, 256), 1, 1)  block = (256, 1, 1) smem = 4 * 256\n",
                           "// @launch grid=ceil_div(n, 256) block=256 smem=4 * (128 + 128) args=(x, y, n)\n"}) {
    auto spec = parse_launch_comments(line, "c.ptx");
    ASSERT_TRUE(spec.ok()) << line << spec.error().message;
    ASSERT_TRUE(check_launch_spec(*spec, *task, parse_module(kPtx), "c.ptx").ok()) << line;
    ASSERT_EQ(spec->launches.size(), 1u);
    EXPECT_EQ(spec->launches[0].block.x.text(), "256") << line;
  }
  auto spec = parse_launch_comments("// @launch grid=(32 + 2 * ceil_div(n, 8192), 1, 1) block=(256,1,1) smem=4 * 256\n", "c.ptx");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->launches[0].grid.x.text(), "32 + 2 * ceil_div(n, 8192)");
  EXPECT_EQ(spec->launches[0].smem.text(), "4 * 256");
  EXPECT_FALSE(parse_launch_comments("// @launch grid= block=1\n", "c.ptx").ok()) << "a key without a value";
}

TEST(LaunchSpec, ErrorsNameTheLine) {
  auto task = parse_task(kTask, "task.toml", "/tmp/t");
  EXPECT_NE(parse_launch_comments("// @lanch grid=1 block=1\n", "c.ptx").error().message.find("c.ptx:1: error: unknown launch directive '@lanch'; did you mean '@launch'?"),
            std::string::npos);
  EXPECT_NE(parse_launch_comments("x\n// @launch grid=(1,1,1)\n", "c.ptx").error().message.find("c.ptx:2: error: missing block"),
            std::string::npos);
  EXPECT_NE(parse_launch_comments(".version 8.0\n", "c.ptx").error().message.find("no launch spec"), std::string::npos);
  EXPECT_NE(parse_launch_comments("// @launch grid=(1 block=1\n", "c.ptx").error().message.find("unbalanced"), std::string::npos);
  // wrong parameter count against the entry's signature
  auto spec = parse_launch_comments("// @launch grid=1 block=1 args=(x, y)\n", "c.ptx");
  ASSERT_TRUE(spec.ok());
  auto s = check_launch_spec(*spec, *task, parse_module(kPtx), "c.ptx");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("c.ptx:1: error: .entry k takes 3 parameters, the launch passes 2"), std::string::npos)
      << s.error().message;
  // a scalar passed where the entry declares a pointer
  spec = parse_launch_comments("// @launch grid=1 block=1 args=(n, y, n)\n", "c.ptx");
  s = check_launch_spec(*spec, *task, parse_module(kPtx), "c.ptx");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("is 8 bytes, but 'n' needs 4"), std::string::npos) << s.error().message;
  spec = parse_launch_comments("// @launch entry=kk grid=1 block=1\n", "c.ptx");
  s = check_launch_spec(*spec, *task, parse_module(kPtx), "c.ptx");
  EXPECT_NE(s.error().message.find("no .entry 'kk'; did you mean 'k'?"), std::string::npos) << s.error().message;
  spec = parse_launch_comments("// @launch grid=1 block=1 args=(x, yy, n)\n", "c.ptx");
  s = check_launch_spec(*spec, *task, parse_module(kPtx), "c.ptx");
  EXPECT_NE(s.error().message.find("'yy' is neither a task parameter nor a scratch buffer; did you mean 'y'?"), std::string::npos);
}

TEST(LaunchSpec, SeveralLaunchesScratchAndToml) {
  const char* two = R"PTX(// @launch entry=a grid=(64,1,1) block=(256,1,1) args=(x, tmp, n)
// @launch entry=b grid=1 block=64 args=(tmp, y, n)
// @scratch name=tmp dtype=f32 count=ceil_div(n, 256)
.version 8.0
.target sm_80
.address_size 64
.visible .entry a(.param .u64 x, .param .u64 t, .param .u32 n) { ret; }
.visible .entry b(.param .u64 t, .param .u64 y, .param .u32 n) { ret; }
)PTX";
  auto task = parse_task(kTask, "task.toml", "/tmp/t");
  auto spec = parse_launch_comments(two, "c.ptx");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  ASSERT_TRUE(check_launch_spec(*spec, *task, parse_module(two), "c.ptx").ok());
  EXPECT_EQ(spec->launches.size(), 2u);
  EXPECT_EQ(spec->scratch[0].name, "tmp");
  auto toml = parse_launch_toml("[[launch]]\ngrid = [\"ceil_div(n,256)\", 1, 1]\nblock = \"(256,1,1)\"\ncluster = \"(2,1,1)\"\n", "l.toml");
  ASSERT_TRUE(toml.ok()) << toml.error().message;
  EXPECT_TRUE(toml->launches[0].has_cluster);
  EXPECT_EQ(*toml->launches[0].grid.evaluate({{"n", 512}}), (std::array<int64_t, 3>{2, 1, 1}));
  EXPECT_NE(parse_launch_toml("[[launch]]\ngrid = \"1\"\nblok = \"1\"\n", "l.toml").error().message.find("did you mean 'block'"),
            std::string::npos);
}

}  // namespace
}  // namespace ptxforge::task
