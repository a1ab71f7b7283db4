#include "task/distribution.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <vector>

#include <fmt/format.h>

namespace ptxforge::task {

namespace {

// `name(arg, ...)`, a bare word, or a number: the shape of every init form.
struct Term {
  std::string name;  // empty for a number
  double number = 0;
  bool has_args = false;
  std::vector<Term> args;
};

class TermParser {
 public:
  explicit TermParser(std::string_view s) : s_(s) {}
  Result<Term> parse() {
    auto t = term();
    if (!t) return t;
    skip();
    if (i_ != s_.size()) return Error{fmt::format("unexpected '{}' after the distribution", s_.substr(i_))};
    return t;
  }

 private:
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  Result<Term> term() {
    skip();
    Term t;
    if (i_ < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) {
      size_t b = i_;
      while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) ++i_;
      t.name = std::string(s_.substr(b, i_ - b));
      skip();
      if (i_ < s_.size() && s_[i_] == '(') {
        ++i_;
        t.has_args = true;
        skip();
        if (i_ < s_.size() && s_[i_] == ')') {
          ++i_;
          return t;
        }
        for (;;) {
          auto a = term();
          if (!a) return a;
          t.args.push_back(std::move(*a));
          skip();
          if (i_ < s_.size() && s_[i_] == ',') {
            ++i_;
            continue;
          }
          if (i_ < s_.size() && s_[i_] == ')') {
            ++i_;
            break;
          }
          return Error{fmt::format("expected ',' or ')' in '{}'", s_)};
        }
      }
      return t;
    }
    // A number, with `_` separators allowed as in the size expressions.
    std::string digits;
    size_t b = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.' || s_[i_] == '_' ||
                              s_[i_] == '-' || s_[i_] == '+')) {
      if ((s_[i_] == '-' || s_[i_] == '+') && i_ > b && s_[i_ - 1] != 'e' && s_[i_ - 1] != 'E') break;
      if (s_[i_] != '_') digits += s_[i_];
      ++i_;
    }
    if (digits.empty()) return Error{fmt::format("expected a number or a distribution in '{}'", s_)};
    char* end = nullptr;
    t.number = std::strtod(digits.c_str(), &end);
    if (end != digits.c_str() + digits.size() || !std::isfinite(t.number))
      return Error{fmt::format("'{}' is not a number", digits)};
    return t;
  }

  std::string_view s_;
  size_t i_ = 0;
};

const char* kForms =
    "uniform(lo, hi), normal(mean, stddev), int(lo, hi), randint(lo, hi), zeros, ones, iota, huge, tiny, "
    "ties(k[, base]), sorted(...), reversed(...), plant_max(..., start|middle|end|random), plant_min(...)";

Result<Distribution> interpret(const Term& t, int depth);

Result<Distribution> base(const Term& t) {
  Distribution d;
  auto numbers = [&](size_t n) -> Status {
    if (!t.has_args || t.args.size() != n) return Error{fmt::format("'{}' takes {} numbers", t.name, n)};
    for (auto& a : t.args)
      if (!a.name.empty()) return Error{fmt::format("'{}' takes numbers, not '{}'", t.name, a.name)};
    return ok_status();
  };
  static const std::pair<const char*, Distribution::Kind> kBare[] = {{"zeros", Distribution::zeros},
                                                                    {"ones", Distribution::ones},
                                                                    {"iota", Distribution::iota},
                                                                    {"huge", Distribution::huge},
                                                                    {"tiny", Distribution::tiny}};
  for (auto& [name, kind] : kBare)
    if (t.name == name) {
      if (t.has_args) return Error{fmt::format("'{}' takes no arguments", t.name)};
      d.kind = kind;
      d.a = kind == Distribution::ones ? 1 : 0;
      d.b = d.a;
      return d;
    }
  if (t.name == "sorted" || t.name == "reversed" || t.name == "ties" || t.name == "plant_max" || t.name == "plant_min")
    return Error{fmt::format("'{}' cannot sit here: the forms nest as plant_max|plant_min(sorted|reversed(ties(k, base)))",
                             t.name)};
  if (t.name == "uniform") d.kind = Distribution::uniform;
  else if (t.name == "normal") d.kind = Distribution::normal;
  else if (t.name == "int" || t.name == "randint") d.kind = Distribution::integers;
  else return Error{fmt::format("unknown distribution '{}'; use {}", t.name.empty() ? "a number" : t.name, kForms)};
  if (auto s = numbers(2); !s) return s.error();
  d.a = t.args[0].number;
  d.b = t.args[1].number;
  if (d.kind == Distribution::integers && (d.a != std::floor(d.a) || d.b != std::floor(d.b)))
    return Error{fmt::format("'{}' takes whole numbers", t.name)};
  if (d.kind != Distribution::normal && d.a > d.b) return Error{fmt::format("'{}': the low end is above the high end", t.name)};
  if (d.kind == Distribution::normal && d.b < 0) return Error{"'normal': the standard deviation is negative"};
  return d;
}

Result<Distribution> interpret(const Term& t, int depth) {
  if (t.name == "plant_max" || t.name == "plant_min") {
    if (depth > 0) return Error{fmt::format("'{}' must be the outermost form", t.name)};
    if (t.args.size() != 2) return Error{fmt::format("'{}' takes a distribution and a place: start, middle, end or random", t.name)};
    auto inner = interpret(t.args[0], 1);
    if (!inner) return inner;
    const std::string& w = t.args[1].name;
    if (w == "start") inner->where = Distribution::Where::start;
    else if (w == "middle") inner->where = Distribution::Where::middle;
    else if (w == "end") inner->where = Distribution::Where::end;
    else if (w == "random") inner->where = Distribution::Where::random;
    else return Error{fmt::format("'{}': the place must be start, middle, end or random", t.name)};
    inner->plant = t.name == "plant_max" ? Distribution::Plant::max : Distribution::Plant::min;
    return inner;
  }
  if (t.name == "sorted" || t.name == "reversed") {
    if (depth > 1) return Error{fmt::format("'{}' must wrap ties(...) or a base distribution, not sit inside one", t.name)};
    if (t.args.size() != 1) return Error{fmt::format("'{}' takes one distribution", t.name)};
    auto inner = interpret(t.args[0], 2);
    if (!inner) return inner;
    inner->order = t.name == "sorted" ? Distribution::Order::sorted : Distribution::Order::reversed;
    return inner;
  }
  if (t.name == "ties") {
    if (depth > 2) return Error{"'ties' must wrap a base distribution, not sit inside one"};
    if (t.args.empty() || t.args.size() > 2 || !t.args[0].name.empty())
      return Error{"'ties' takes a count and optionally a base distribution: ties(k) or ties(k, uniform(0, 1))"};
    double k = t.args[0].number;
    if (k < 1 || k != std::floor(k) || k > 1e12) return Error{"'ties': the count must be a whole number from 1"};
    Distribution d;
    if (t.args.size() == 2) {
      auto b = base(t.args[1]);
      if (!b) return b;
      d = *b;
    } else {
      d.kind = Distribution::integers;  // ties(k): the values 0 .. k-1
      d.a = 0;
      d.b = k - 1;
    }
    if (d.kind == Distribution::iota) return Error{"'ties' of iota makes no sense: iota has no ties"};
    d.ties = static_cast<uint64_t>(k);
    return d;
  }
  return base(t);
}

std::string num(double v) { return fmt::format("{}", v); }

// Acklam's rational approximation of the normal quantile (relative error below 1.2e-9).
double normal_quantile(double p) {
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01,  -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00};
  p = std::min(std::max(p, 1e-300), 1 - 1e-16);
  const double lo = 0.02425, hi = 1 - lo;
  if (p < lo) {
    double q = std::sqrt(-2 * std::log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > hi) {
    double q = std::sqrt(-2 * std::log1p(-p));
    return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

// Symmetric around zero: [-hi, -lo] for u < 1/2, [lo, hi] above; `log` spaces magnitudes
// logarithmically. Unsigned types get the positive half only.
double signed_band(double u, double lo, double hi, bool log_spaced, bool has_sign) {
  auto mag = [&](double v) { return log_spaced ? lo * std::pow(hi / lo, v) : lo + (hi - lo) * v; };
  if (!has_sign) return mag(u);
  return u < 0.5 ? -mag(1 - 2 * u) : mag(2 * u - 1);
}

}  // namespace

Result<Distribution> Distribution::parse(std::string_view text) {
  auto t = TermParser(text).parse();
  if (!t) return Error{fmt::format("'{}' is not a distribution ({}); use {}", text, t.error().message, kForms)};
  auto d = interpret(*t, 0);
  if (!d) return Error{fmt::format("'{}': {}", text, d.error().message)};
  return d;
}

std::string Distribution::text() const {
  std::string s;
  switch (kind) {
    case uniform: s = fmt::format("uniform({}, {})", num(a), num(b)); break;
    case normal: s = fmt::format("normal({}, {})", num(a), num(b)); break;
    case integers: s = fmt::format("int({}, {})", num(a), num(b)); break;
    case zeros: s = "zeros"; break;
    case ones: s = "ones"; break;
    case iota: s = "iota"; break;
    case huge: s = "huge"; break;
    case tiny: s = "tiny"; break;
  }
  if (ties) {
    bool plain = kind == integers && a == 0 && b == static_cast<double>(ties) - 1;
    s = plain ? fmt::format("ties({})", ties) : fmt::format("ties({}, {})", ties, s);
  }
  if (order == Order::sorted) s = "sorted(" + s + ")";
  if (order == Order::reversed) s = "reversed(" + s + ")";
  if (plant != Plant::none) {
    const char* w = where == Where::start ? "start" : where == Where::middle ? "middle" : where == Where::end ? "end" : "random";
    s = fmt::format("{}({}, {})", plant == Plant::max ? "plant_max" : "plant_min", s, w);
  }
  return s;
}

std::string Distribution::unfit_for(DType t) const {
  if (kind == tiny && !is_float(t)) return fmt::format("'tiny' needs a floating-point type, not {}", dtype_name(t));
  if (!is_signed(t) && (kind == normal || ((kind == uniform || kind == integers) && a < 0)))
    return fmt::format("'{}' draws negative values, which {} cannot hold", text(), dtype_name(t));
  return "";
}

double base_quantile(const Distribution& d, DType t, double u) {
  switch (d.kind) {
    case Distribution::uniform: return d.a + (d.b - d.a) * u;
    case Distribution::normal: return d.a + d.b * normal_quantile(u);
    case Distribution::integers: {
      double span = d.b - d.a + 1;
      return d.a + std::min(std::floor(u * span), span - 1);
    }
    case Distribution::zeros: return 0;
    case Distribution::ones: return 1;
    case Distribution::iota: return 0;  // iota is positional; the generator handles it
    case Distribution::huge:
      if (!is_float(t)) return signed_band(u, std::floor(dtype_max(t) / 4), std::floor(dtype_max(t) / 2), false, is_signed(t));
      return signed_band(u, dtype_max(t) / 4, dtype_max(t) / 2, false, true);
    case Distribution::tiny: {
      // log-spaced magnitudes over [m/8, 8m]: m/8 * 64^v
      double m = dtype_min_normal(t) / 8;
      if (u < 0.5) return -m * std::exp2(6 * (1 - 2 * u));
      return m * std::exp2(6 * (2 * u - 1));
    }
  }
  return 0;
}

double base_sup(const Distribution& d, DType t) {
  switch (d.kind) {
    case Distribution::uniform:
    case Distribution::integers: return d.b;
    case Distribution::normal: return d.a + 6 * d.b;  // beyond the largest of 2^30 draws
    case Distribution::zeros: return 0;
    case Distribution::ones: return 1;
    case Distribution::iota: return 0;  // the generator uses the count
    case Distribution::huge: return dtype_max(t) / 2;
    case Distribution::tiny: return dtype_min_normal(t) * 8;
  }
  return 0;
}

double base_inf(const Distribution& d, DType t) {
  switch (d.kind) {
    case Distribution::uniform:
    case Distribution::integers: return d.a;
    case Distribution::normal: return d.a - 6 * d.b;
    case Distribution::zeros: return 0;
    case Distribution::ones: return 1;
    case Distribution::iota: return 0;
    case Distribution::huge: return is_signed(t) ? -dtype_max(t) / 2 : std::floor(dtype_max(t) / 4);
    case Distribution::tiny: return -dtype_min_normal(t) * 8;
  }
  return 0;
}

}  // namespace ptxforge::task
