// Built by plain clang++ without the plugin, the header still compiles and links with the
// runtime, and calling a kernel throws tile::error saying the plugin was missing.
// RUN: %clangxx -std=c++20 -Wno-unknown-attributes -I%include %s -o %t -L%tile-bin/lib -ltile_runtime -Wl,-rpath,%tile-bin/lib
// RUN: %t | FileCheck %s
// CHECK: message: {{.*}}without the tile plugin
// CHECK: PASS no_plugin_throws
// CHECK: PASS no_plugin_host_api
// CHECK-NOT: FAIL

#include "Inputs/check.h"

namespace T = tile;

[[tile::kernel]] void scale(T::tensor<float, 1> x, float alpha) {
  const int n = x.size(0);
  auto [bx] = T::grid(T::ceildiv(n, 64));
  T::fragment<float, 64> f;
  T::copy(x.at(bx * 64), f);
  for (int i : T::parallel(64))
    f(i) = f(i) * alpha;
  T::copy(f, x.at(bx * 64));
}

int main() {
  auto x = check::random<float>(100);
  auto X = check::upload(x, {100});
  check::throws("no_plugin_throws", [&] { scale(X, 2.0f); }, {"plugin"});
  // The host API works without the plugin, and the failed call changed nothing.
  check::equal("no_plugin_host_api", x, X.to_vector());
  return check::result();
}
