#include "broker/daemon/api/adoption.h"

#include <fmt/format.h>

#include <functional>

namespace skyslurm::daemon {
namespace {

// One record's fields, each read or written by name (both directions from
// the same table, so that they cannot drift apart).
template <typename T>
struct Field {
  const char* name;
  std::function<Json::Value(const T&)> get;
  std::function<bool(T&, const Json::Value&)> set;
};

template <typename T>
Field<T> Text(const char* name, std::string T::*member) {
  return {name, [member](const T& t) { return Json::Value(t.*member); },
          [member](T& t, const Json::Value& v) {
            if (!v.isString()) return false;
            t.*member = v.asString();
            return true;
          }};
}

template <typename T, typename N>
Field<T> Number(const char* name, N T::*member) {
  return {name, [member](const T& t) { return Json::Value(Json::Int64{t.*member}); },
          [member](T& t, const Json::Value& v) {
            if (!v.isIntegral()) return false;
            t.*member = static_cast<N>(v.asInt64());
            return true;
          }};
}

template <typename T>
Field<T> Flag(const char* name, bool T::*member) {
  return {name, [member](const T& t) { return Json::Value(t.*member); },
          [member](T& t, const Json::Value& v) {
            if (!v.isBool()) return false;
            t.*member = v.asBool();
            return true;
          }};
}

const std::vector<Field<store::SkyJob>>& JobFields() {
  using J = store::SkyJob;
  static const std::vector<Field<J>> fields = {
      Text("sky_id", &J::sky_id),
      Text("state", &J::state),
      Text("reason", &J::reason),
      Text("cluster", &J::cluster),
      Text("native_id", &J::native_id),
      Text("input_json", &J::input_json),
      Flag("managed", &J::managed),
      Number("retry_on_failure", &J::retry_on_failure),
      Number("restarts", &J::restarts),
      Number("moves", &J::moves),
      Number("created", &J::created),
      Number("updated", &J::updated),
      Number("submitted", &J::submitted),
      Number("expected_start", &J::expected_start),
      Number("model_start", &J::model_start),
      Number("started", &J::started),
      Number("ended", &J::ended),
      Number("exit_code", &J::exit_code),
      Text("parent", &J::parent),
      Text("indices", &J::indices),
      {"global_id", [](const J& j) { return Json::Value(Json::UInt64{j.global_id}); },
       [](J& j, const Json::Value& v) {
         if (!v.isIntegral()) return false;
         j.global_id = v.asUInt64();
         return true;
       }},
      Text("name", &J::name),
  };
  return fields;
}

const std::vector<Field<store::Copy>>& CopyFields() {
  using C = store::Copy;
  static const std::vector<Field<C>> fields = {
      Text("cluster", &C::cluster),       Text("native_id", &C::native_id),
      Text("partition", &C::partition),   Text("args", &C::args),
      Text("script", &C::script),         Text("state", &C::state),
      Number("submitted", &C::submitted), Text("workdir", &C::workdir),
      Text("source", &C::source),         Number("sent_ns", &C::sent_ns),
  };
  return fields;
}

const std::vector<Field<store::Event>>& EventFields() {
  using E = store::Event;
  static const std::vector<Field<E>> fields = {
      Number("time", &E::time),         Text("kind", &E::kind),     Text("cluster", &E::cluster),
      Text("native_id", &E::native_id), Text("detail", &E::detail),
  };
  return fields;
}

const std::vector<Field<store::Intent>>& IntentFields() {
  using I = store::Intent;
  static const std::vector<Field<I>> fields = {
      Text("action", &I::action),
      Text("cluster", &I::cluster),
      Text("native_id", &I::native_id),
      Number("created", &I::created),
  };
  return fields;
}

template <typename T>
Json::Value Write(const T& t, const std::vector<Field<T>>& fields) {
  Json::Value v(Json::objectValue);
  for (const auto& f : fields) v[f.name] = f.get(t);
  return v;
}

template <typename T>
Result<T> Read(const Json::Value& v, const std::vector<Field<T>>& fields, std::string_view what) {
  if (!v.isObject()) return InvalidArgumentError(fmt::format("{}: not an object", what));
  T t{};
  for (const auto& f : fields) {
    if (!f.set(t, v[f.name])) {
      return InvalidArgumentError(
          fmt::format("{}: '{}' is missing or of the wrong type", what, f.name));
    }
  }
  return t;
}

template <typename T>
Result<std::vector<T>> ReadList(const Json::Value& v, const std::vector<Field<T>>& fields,
                                std::string_view what) {
  if (!v.isArray()) return InvalidArgumentError(fmt::format("'{}' must be a list", what));
  std::vector<T> out;
  for (const auto& item : v) {
    SKY_ASSIGN_OR_RETURN(T t, Read(item, fields, what));
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

Json::Value AdoptedJobJson(const AdoptedJob& a) {
  Json::Value v(Json::objectValue);
  v["job"] = Write(a.job, JobFields());
  for (const char* list : {"copies", "events", "intents"}) v[list] = Json::Value(Json::arrayValue);
  for (const auto& c : a.copies) v["copies"].append(Write(c, CopyFields()));
  for (const auto& e : a.events) v["events"].append(Write(e, EventFields()));
  for (const auto& i : a.intents) v["intents"].append(Write(i, IntentFields()));
  return v;
}

Result<AdoptedJob> AdoptedJobFromJson(const Json::Value& v) {
  if (!v.isObject()) return InvalidArgumentError("an adopted job must be an object");
  AdoptedJob a;
  SKY_ASSIGN_OR_RETURN(a.job, Read(v["job"], JobFields(), "job"));
  SKY_ASSIGN_OR_RETURN(a.copies, ReadList(v["copies"], CopyFields(), "copies"));
  SKY_ASSIGN_OR_RETURN(a.events, ReadList(v["events"], EventFields(), "events"));
  SKY_ASSIGN_OR_RETURN(a.intents, ReadList(v["intents"], IntentFields(), "intents"));
  for (auto& c : a.copies) c.sky_id = a.job.sky_id;
  for (auto& e : a.events) e.sky_id = a.job.sky_id;
  for (auto& i : a.intents) i.sky_id = a.job.sky_id;
  return a;
}

}  // namespace skyslurm::daemon
