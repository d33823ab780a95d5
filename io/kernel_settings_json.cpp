#include "io/kernel_settings_json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/errors.hpp"
#include "core/suggest.hpp"

namespace pegasos {
namespace {

using nlohmann::json;

[[noreturn]] void reject(const std::string& origin, const std::string& key, const std::string& what) {
  throw ConfigError(origin + ": " + key + ": " + what);
}

double finite(const json& j, const std::string& origin, const std::string& key) {
  if (!j.is_number()) reject(origin, key, "expected a number, found " + std::string(j.type_name()) + " " + j.dump());
  const double v = j.get<double>();
  if (!std::isfinite(v)) reject(origin, key, "must be finite");
  return v;
}

std::int64_t integer(const json& j, const std::string& origin, const std::string& key) {
  const double v = finite(j, origin, key);
  if (v != std::floor(v) || std::abs(v) > 9.0e15) reject(origin, key, "expected an integer, found " + j.dump());
  return static_cast<std::int64_t>(v);
}

// "kernel": {"type", "gamma", "degree", "coef0"} (or just a type name) into s.kernel.
void read_kernel_params(const json& given, const std::string& origin, KernelSettings& s) {
  json k = given;
  if (k.is_string()) k = json{{"type", k}};  // "kernel": "rbf" is short for {"type": "rbf"}
  if (!k.is_object()) {
    reject(origin, "kernel",
        "expected an object {\"type\": \"rbf\", \"gamma\": ...} or a kernel name, found " + k.dump());
  }
  static const std::vector<std::string> keys = {"type", "gamma", "degree", "coef0"};
  for (const auto& [key, value] : k.items()) {
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      reject(origin, "kernel/" + key,
             "unknown kernel parameter" + did_you_mean(key, keys) + " (expected type, gamma, degree or coef0)");
    }
  }
  if (auto t = k.find("type"); t != k.end()) {
    if (!t->is_string() || !parse_kernel_type(t->get<std::string>(), s.kernel.type)) {
      reject(origin, "kernel/type", "expected one of linear, polynomial, rbf, found " + t->dump());
    }
  }
  const bool uses_gamma = s.kernel.type != KernelType::kLinear;
  const bool polynomial = s.kernel.type == KernelType::kPolynomial;
  if (auto g = k.find("gamma"); g != k.end()) {
    if (!(g->is_string() && *g == "auto")) {
      s.kernel.gamma = finite(*g, origin, "kernel/gamma");
      if (!(s.kernel.gamma > 0)) reject(origin, "kernel/gamma", "must be > 0 (or \"auto\" for 1/dimension)");
    }
    if (!uses_gamma && s.kernel.gamma != 0.0) reject(origin, "kernel/gamma", "not used by the linear kernel");
  }
  if (auto d = k.find("degree"); d != k.end()) {
    const std::int64_t degree = integer(*d, origin, "kernel/degree");
    if (degree < 1 || degree > kMaxKernelDegree) {
      reject(origin, "kernel/degree", "must be between 1 and " + std::to_string(kMaxKernelDegree));
    }
    s.kernel.degree = static_cast<int>(degree);
    if (!polynomial && degree != KernelParams{}.degree) {
      reject(origin, "kernel/degree",
             "only the polynomial kernel has a degree (the kernel is " + to_string(s.kernel.type) + ")");
    }
  }
  if (auto c = k.find("coef0"); c != k.end()) {
    s.kernel.coef0 = finite(*c, origin, "kernel/coef0");
    if (!polynomial && s.kernel.coef0 != KernelParams{}.coef0) {
      reject(origin, "kernel/coef0",
             "only the polynomial kernel has coef0 (the kernel is " + to_string(s.kernel.type) + ")");
    }
  }
}

}  // namespace

json kernel_params_to_json(const KernelParams& k) {
  return {{"type", to_string(k.type)}, {"gamma", k.gamma}, {"degree", k.degree}, {"coef0", k.coef0}};
}

json default_kernel_json() {
  return {{"type", "rbf"}, {"gamma", "auto"}, {"degree", 3}, {"coef0", 0.0}};
}

KernelSettings kernel_settings_from_json(const json& config, const std::string& origin) {
  KernelSettings s;
  if (!config.is_object()) throw ConfigError(origin + ": a configuration is a JSON object of settings");
  if (auto it = config.find("kernel"); it != config.end() && !it->is_null()) read_kernel_params(*it, origin, s);
  if (auto it = config.find("max_support_vectors"); it != config.end() && !it->is_null()) {
    const std::int64_t b = integer(*it, origin, "max_support_vectors");
    if (b < 0) reject(origin, "max_support_vectors", "must be >= 0 (0 = no budget)");
    s.max_support_vectors = static_cast<std::uint64_t>(b);
  }
  // A full budget merges (RBF's default) or removes; the choice needs a budget.
  s.merge_budget = s.max_support_vectors > 0 && s.kernel.type == KernelType::kRbf;
  if (auto it = config.find("budget_maintenance"); it != config.end() && !it->is_null()) {
    if (!it->is_string() || (*it != "merge" && *it != "remove")) {
      reject(origin, "budget_maintenance", "expected \"merge\" or \"remove\", found " + it->dump());
    }
    if (s.max_support_vectors == 0) reject(origin, "budget_maintenance",
        "only used with a budget (max_support_vectors > 0)");
    s.merge_budget = *it == "merge";
    if (s.merge_budget && s.kernel.type != KernelType::kRbf) {
      reject(origin, "budget_maintenance",
          "merge needs the rbf kernel (kernel is " + to_string(s.kernel.type) + "); use remove");
    }
  }
  // The refit of a budget's coefficients (RBF's default); needs a budget and the RBF kernel.
  s.budget_refit = s.max_support_vectors > 0 && s.kernel.type == KernelType::kRbf;
  if (auto it = config.find("budget_refit"); it != config.end() && !it->is_null()) {
    if (!it->is_boolean()) reject(origin, "budget_refit", "expected true or false, found " + it->dump());
    if (s.max_support_vectors == 0) reject(origin, "budget_refit", "only used with a budget (max_support_vectors > 0)");
    s.budget_refit = it->get<bool>();
    if (s.budget_refit && s.kernel.type != KernelType::kRbf) {
      reject(origin, "budget_refit", "needs the rbf kernel (kernel is " + to_string(s.kernel.type) + "); use false");
    }
  }
  if (auto it = config.find("kernel_cache_mb"); it != config.end() && !it->is_null()) {
    s.cache_megabytes = finite(*it, origin, "kernel_cache_mb");
    if (s.cache_megabytes < 0) reject(origin, "kernel_cache_mb", "must be >= 0 (0 = no kernel cache)");
  }
  return s;
}

json kernel_settings_to_json(const KernelSettings& s) {
  json k = kernel_params_to_json(s.kernel);
  if (s.kernel.gamma == 0.0) k["gamma"] = "auto";
  json j = {{"kernel", k}, {"max_support_vectors", s.max_support_vectors}, {"kernel_cache_mb", s.cache_megabytes}};
  if (s.max_support_vectors > 0) {  // only then: older files stay
    j["budget_maintenance"] = s.merge_budget ? "merge" : "remove";
    if (s.kernel.type == KernelType::kRbf) j["budget_refit"] = s.budget_refit;  // the other kernels have none
  }
  return j;
}

}  // namespace pegasos
