// A stand-in for libamdhip64.so with the functions the HIP backend calls, for the backend's
// error paths on machines without an AMD GPU (RuntimeHipTest.cpp). What it does is set by
// the environment when it is called:
//   FAKE_HIP_INIT_FAILS=1   hipInit fails (hipErrorInvalidDevice, as ROCm's does without a GPU)
//   FAKE_HIP_DEVICES=N      hipGetDeviceCount gives N (an AMD gfx90a each)
// Every device call fails but the few a backend's construction makes; hipModuleLoadData
// refuses every image (hipErrorInvalidImage).
#include <cstdlib>
#include <cstring>
#include <hip/hip_runtime_api.h>

namespace {
bool env_is(const char *name, const char *value) {
  const char *v = std::getenv(name);
  return v && std::strcmp(v, value) == 0;
}
} // namespace

extern "C" {
hipError_t hipInit(unsigned int) { return env_is("FAKE_HIP_INIT_FAILS", "1") ? hipErrorInvalidDevice : hipSuccess; }
hipError_t hipGetDeviceCount(int *count) {
  const char *n = std::getenv("FAKE_HIP_DEVICES");
  *count = n ? std::atoi(n) : 0;
  return *count > 0 ? hipSuccess : hipErrorNoDevice;
}
hipError_t hipSetDevice(int) { return hipSuccess; }
hipError_t hipDeviceGetAttribute(int *value, hipDeviceAttribute_t attr, int) {
  *value = attr == hipDeviceAttributeMaxSharedMemoryPerBlock ? 65536 : 0;
  return hipSuccess;
}
hipError_t hipGetDeviceProperties(hipDeviceProp_t *p, int) {
  std::memset(p, 0, sizeof *p);
  std::strcpy(p->gcnArchName, "gfx90a:sramecc+:xnack-");
  return hipSuccess;
}
hipError_t hipMalloc(void **, size_t) { return hipErrorOutOfMemory; }
hipError_t hipFree(void *) { return hipSuccess; }
hipError_t hipMemcpyHtoD(hipDeviceptr_t, void *, size_t) { return hipErrorNotSupported; }
hipError_t hipMemcpyDtoH(void *, hipDeviceptr_t, size_t) { return hipErrorNotSupported; }
hipError_t hipModuleLoadData(hipModule_t *, const void *) { return hipErrorInvalidImage; }
hipError_t hipModuleGetFunction(hipFunction_t *, hipModule_t, const char *) { return hipErrorNotFound; }
hipError_t hipModuleGetGlobal(hipDeviceptr_t *, size_t *, hipModule_t, const char *) { return hipErrorNotFound; }
hipError_t hipModuleLaunchKernel(hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                 hipStream_t, void **, void **) {
  return hipErrorNotSupported;
}
hipError_t hipDeviceSynchronize() { return hipSuccess; }
const char *hipGetErrorName(hipError_t e) {
  switch (e) {
  case hipErrorInvalidDevice: return "hipErrorInvalidDevice";
  case hipErrorInvalidImage: return "hipErrorInvalidImage";
  case hipErrorOutOfMemory: return "hipErrorOutOfMemory";
  default: return "hipErrorUnknown";
  }
}
const char *hipGetErrorString(hipError_t) { return "fake HIP runtime"; }
}
