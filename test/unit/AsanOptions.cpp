// Linked into tile_unit_tests in sanitized builds (TILE_SANITIZE). The runtime reports an
// allocation that fails as tile::error, and the tests ask for sizes no machine has; ASan
// aborts on requests past its limit unless told to fail them as malloc does.
extern "C" const char *__asan_default_options() { return "allocator_may_return_null=1"; }
