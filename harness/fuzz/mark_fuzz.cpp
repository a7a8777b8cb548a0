// libFuzzer target: any bytes as one line of the mark protocol. A message is
// applied or refused with an error; nothing else may happen.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "measure/sampler.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mh::RunRecord rec;
  std::string error;
  const std::string line(reinterpret_cast<const char*>(data), size);
  if (!mh::apply_message(line, rec, error) && error.empty()) std::abort();
  return 0;
}
