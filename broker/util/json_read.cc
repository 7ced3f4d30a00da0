#include "broker/util/json_read.h"

#include <exception>
#include <memory>

namespace skyslurm {

bool ReadJson(std::string_view text, Json::Value* out, std::string* errors, bool strict_root) {
  Json::CharReaderBuilder builder;
  if (strict_root) builder["strictRoot"] = true;
  const std::unique_ptr<Json::CharReader> reader(builder.newCharReader());
  try {
    return reader->parse(text.data(), text.data() + text.size(), out, errors);
  } catch (const std::exception& e) {
    *errors = std::string("nested too deep: ") + e.what();
    return false;
  }
}

}  // namespace skyslurm
