#include "broker/util/json_mask.h"

#include "broker/util/json_cursor.h"

namespace skyslurm {

JsonMask JsonMask::All() {
  JsonMask m;
  m.all_ = true;
  return m;
}

JsonMask JsonMask::Of(std::initializer_list<std::string_view> paths) {
  JsonMask m;
  for (std::string_view p : paths) m.Add(p);
  return m;
}

JsonMask& JsonMask::Add(std::string_view path) {
  if (all_) return *this;
  const std::size_t dot = path.find('.');
  const std::string_view head = path.substr(0, dot);
  JsonMask* child = nullptr;
  for (auto& [key, mask] : children_) {
    if (key == head) child = &mask;
  }
  if (child == nullptr) child = &children_.emplace_back(std::string(head), JsonMask()).second;
  if (dot == std::string_view::npos) {
    *child = All();
  } else {
    child->Add(path.substr(dot + 1));
  }
  return *this;
}

JsonMask& JsonMask::With(std::string_view key, JsonMask child) {
  for (auto& [k, mask] : children_) {
    if (k == key) {
      mask = std::move(child);
      return *this;
    }
  }
  children_.emplace_back(std::string(key), std::move(child));
  return *this;
}

const JsonMask* JsonMask::Child(std::string_view key) const {
  if (all_) return this;
  for (const auto& [k, mask] : children_) {
    if (k == key) return &mask;
  }
  return nullptr;
}

Result<Json::Value> ParseMasked(std::string_view text, const JsonMask& mask) {
  JsonCursor cursor(text);
  SKY_ASSIGN_OR_RETURN(Json::Value value, cursor.Value(mask));
  SKY_RETURN_IF_ERROR(cursor.End());
  return value;
}

Json::Value Masked(const Json::Value& value, const JsonMask& mask) {
  if (mask.keeps_all()) return value;
  if (value.isArray()) {
    Json::Value out(Json::arrayValue);
    for (const auto& element : value) out.append(Masked(element, mask));
    return out;
  }
  if (!value.isObject()) return value;
  Json::Value out(Json::objectValue);
  for (auto it = value.begin(); it != value.end(); ++it) {
    const std::string key = it.name();
    if (const JsonMask* child = mask.Child(key)) out[key] = Masked(*it, *child);
  }
  return out;
}

}  // namespace skyslurm
