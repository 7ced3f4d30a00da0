#include "broker/backend/slurm/slurm_translator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <map>
#include <set>

#include "broker/cluster/hostlist.h"
#include "broker/translate/gpus.h"
#include "broker/translate/modules.h"
#include "broker/translate/partitions.h"
#include "broker/util/strings.h"

namespace skyslurm::translate {
namespace {

using job::GpuAsk;
using job::Opt;
using job::Origin;
using job::Request;
using job::Setting;

bool IsSky(const Setting& s) { return job::SkyOptionOf(s.id()).has_value(); }

std::string Join(const std::vector<std::string>& v, std::string_view sep) {
  std::string out;
  for (const auto& x : v) {
    if (!out.empty()) out += sep;
    out += x;
  }
  return out;
}

// Whether a --dependency names job ids (which exist only where they ran).
bool DependsOnJobIds(const std::string& dependency) {
  // type:id[:id][+time] items separated by ',' or '?'; "singleton" has none.
  std::size_t start = 0;
  while (start <= dependency.size()) {
    auto end = dependency.find_first_of(",?", start);
    if (end == std::string::npos) end = dependency.size();
    const std::string item = dependency.substr(start, end - start);
    start = end + 1;
    const auto colon = item.find(':');
    if (colon == std::string::npos) {
      if (!item.empty() && std::isdigit(static_cast<unsigned char>(item[0]))) return true;
      continue;
    }
    if (item.find_first_of("0123456789", colon) != std::string::npos) return true;
  }
  return false;
}

// Replaces whole feature names in a --constraint expression.
std::string ReplaceFeatures(const std::string& expression,
                            const std::map<std::string, std::string>& renames) {
  std::string out, token;
  auto flush = [&] {
    auto it = renames.find(token);
    out += it != renames.end() ? it->second : token;
    token.clear();
  };
  for (char c : expression) {
    if (std::string_view("&|,[]()!*").find(c) != std::string_view::npos) {
      flush();
      out += c;
    } else {
      token += c;
    }
  }
  flush();
  return out;
}

class Translator {
 public:
  Translator(const Request& r, const cluster::Description& t, const TranslateContext& c)
      : r_(r), target_(t), ctx_(c), settings_(*c.settings), catalog_(*c.catalog) {}

  Translation Run() {
    Translation out;
    out.cluster = target_.name;
    peer_ = target_.name != ctx_.home;
    job_.cluster = target_.name;
    job_.script_args = r_.script_args;
    job_.tool = r_.tool;

    Portability();
    for (std::size_t k = 0; k < r_.ComponentCount(); ++k) Component(k);
    // What stays in job_ (partitions, needs) is component 0's: it runs the
    // script.
    if (r_.hetjob) {
      needs_ = first_needs_;
      added_ = first_added_;
      job_.partitions = first_partitions_;
    }
    StepOptions();
    Paths();
    Modules();
    ResolvedDependency();
    if (!reasons_.empty()) {
      out.reasons = reasons_;
      return out;
    }
    if (r_.hetjob) {
      // Placement estimates the job as a whole: one candidate per cluster.
      job_.partition_note = Join(component_notes_, "; ");
      job_.fitting_partitions.clear();
    }
    Rewrite();
    Queued();
    job_.heterogeneous = r_.hetjob;
    out.job = std::move(job_);
    return out;
  }

 private:
  std::string Where(const Setting& s) const { return s.origin.Describe(r_.script_name); }

  // The job as squeue lists it once submitted: pending in its partition
  // (the translation's, else the job's own list, as squeue shows a job
  // pending for several), its nodes, GPUs of the type as this cluster spells
  // it, time limit and array tasks.
  void Queued() {
    cluster::QueuedJob& q = job_.queued;
    q.phase = cluster::JobPhase::kPending;
    q.state = "PENDING";
    q.reason = r_.hold ? "JobHeldUser" : "Priority";
    q.partition = !job_.partitions.empty() ? job_.partitions.front() : Join(r_.partitions, ",");
    q.nodes = r_.nodes ? r_.nodes->min : 1;
    // An array pends as its tasks: each waits for its GPUs.
    if (r_.array_indices && !r_.array_indices->indices.empty()) {
      q.tasks = static_cast<std::int64_t>(r_.array_indices->indices.size());
    }
    if (r_.time_limit && r_.time_limit->minutes) q.time_limit_minutes = *r_.time_limit->minutes;
    const job::GpuDemand& d = r_.gpu_demand;
    q.gpu_type = needs_.gpu_type.value_or(d.type);
    if (d.per_job || d.per_task) {
      q.gpus_per_job = d.total;  // squeue's tres_per_job
    } else {
      q.gpus_per_node = d.per_node;
    }
  }

  // The component being translated (0: the request itself).
  const Request& c() const { return r_.Component(component_); }

  // One component's nodes, plugin options, GPUs, features, account and
  // partition. A heterogeneous job's reasons name the component; its
  // partition choice is kept for the component's own #SBATCH lines.
  void Component(std::size_t k) {
    component_ = k;
    needs_ = Needs{};
    gpu_missing_ = false;
    added_.clear();
    const std::size_t reasons_before = reasons_.size();
    const std::size_t changes_before = job_.changes.size();
    NodeNames();
    PluginOptions();
    Gpus();
    Features();
    AccountAndQos();
    // Without the GPUs it asks for, no partition question makes sense.
    if (!gpu_missing_) ChoosePartition();
    if (!r_.hetjob) return;
    for (std::size_t i = changes_before; i < job_.changes.size(); ++i) {
      if (job_.changes[i].where == "(added)") {
        job_.changes[i].where = fmt::format("(added to hetjob component {})", k);
      }
    }
    for (std::size_t i = reasons_before; i < reasons_.size(); ++i) {
      reasons_[i] = fmt::format("hetjob component {}: {}", k, reasons_[i]);
    }
    if (k == 0) {
      component_notes_.push_back(job_.partition_note);
      first_needs_ = needs_;
      first_added_ = added_;
      first_partitions_ = job_.partitions;
    } else {
      component_notes_.push_back(fmt::format("component {}: {}", k, job_.partition_note));
      component_added_[k] = added_;
    }
    added_.clear();
    job_.partitions.clear();
    job_.partition_note.clear();
    job_.fitting_partitions.clear();
  }

  void Change(const Setting& s, std::string new_value, std::string why) {
    // A later component's copy of an option carried on from the one before
    // (or of the environment's, or of the command line's, which sbatch
    // reads again for each component) changes with the original: the same
    // words are sent once.
    if (s.inherited || (component_ > 0 && s.origin.kind == Origin::Kind::kEnvironment)) return;
    job_.changes.push_back({Where(s),
                            fmt::format("--{}={} -> --{}={}", s.name(),
                                        s.occurrence.value.value_or(""), s.name(), new_value),
                            std::move(why)});
    new_values_[&s] = std::move(new_value);
  }

  void Portability() {
    if (r_.dependency && peer_ && DependsOnJobIds(*r_.dependency)) {
      reasons_.push_back(fmt::format("--dependency={} names job ids, which exist only on {}",
                                     *r_.dependency, ctx_.home));
    }
    // A job whose components are the command line's ':' groups would be
    // sent to sbatch as one: only a script's hetjob blocks are routed.
    if (r_.het_on_command_line) {
      reasons_.push_back(
          "a heterogeneous job written with ':' on the command line: skyslurm routes one whose "
          "components are '#SBATCH hetjob' blocks of its script (or submit it without --sky-*, "
          "with your cluster's own sbatch)");
    }
    // At home too when it names another cluster: its sbatch would send the
    // job there through Slurm's own multi-cluster routing.
    const Setting* m = r_.Effective(Opt::kClusters);
    if (m != nullptr && !peer_ && m->occurrence.value.value_or("") == target_.name) m = nullptr;
    if (m != nullptr) {
      reasons_.push_back(fmt::format(
          "--clusters={} ({}) is Slurm's own multi-cluster routing; leave it out when skyslurm "
          "routes the job",
          m->occurrence.value.value_or(""), Where(*m)));
    }
    // An array is no caveat: skyslurmd spreads it over clusters when that
    // starts its tasks sooner (daemon/array_spread.cc), and says so.
    // slurmctld refuses an index at or above its MaxArraySize ("Invalid job
    // array specification"): said here, with the index and the limit.
    if (r_.array_indices && !r_.array_indices->indices.empty() && target_.max_array_size &&
        r_.array_indices->indices.back() >= *target_.max_array_size) {
      const Setting* a = r_.Effective(Opt::kArray);
      reasons_.push_back(
          fmt::format("--array={}{}: index {} is at or above {}'s MaxArraySize ({})",
                      r_.array.value_or(""), a != nullptr ? " (" + Where(*a) + ")" : "",
                      r_.array_indices->indices.back(), target_.name, *target_.max_array_size));
    }
    if (r_.wait && peer_) {
      job_.caveats.push_back(fmt::format("--wait: waiting for the job on {}", target_.name));
    }
    if (r_.hold && peer_) {
      job_.caveats.push_back(fmt::format(
          "--hold: the job is held on {}; release it there (skyslurm or scontrol release)",
          target_.name));
    }
    if (r_.export_env && peer_) {
      const std::string& e = *r_.export_env;
      if (e != "ALL" && e != "NONE" && !e.empty()) {
        job_.caveats.push_back(fmt::format(
            "--export={}: the variables named travel with their values from where you submit", e));
      }
    }
  }

  void Gpus() {
    std::map<std::string, std::string> respelled;  // asked type -> target type
    for (const GpuAsk& ask : c().gpus) {
      if (ask.type.empty() || respelled.contains(ask.type)) continue;
      GpuSpelling spelling = SpellGpu(ask.type, target_, settings_, catalog_);
      if (!spelling.type) {
        reasons_.push_back(spelling.why);
        gpu_missing_ = true;
        continue;
      }
      respelled[ask.type] = *spelling.type;
      if (*spelling.type != ask.type) why_[ask.type] = spelling.why;
      if (!needs_.gpu_type) needs_.gpu_type = *spelling.type;
    }
    // GPUs per node the job needs, and in all (job/gpu_demand.h).
    needs_.gpus_per_node = c().gpu_demand.per_node;
    needs_.gpus_total = c().gpu_demand.asked_in_all;
    const std::int64_t nodes = c().nodes ? c().nodes->min : 1;
    const std::int64_t tasks_per_node = c().gpu_demand.tasks_per_node;
    // Rewrite the options that named a type this cluster spells otherwise.
    for (Opt option :
         {Opt::kGres, Opt::kGpus, Opt::kGpusPerNode, Opt::kGpusPerTask, Opt::kGpusPerSocket}) {
      const Setting* s = c().Effective(option);
      if (s == nullptr || !s->occurrence.value) continue;
      std::string value;
      std::vector<std::string> whys;
      if (option == Opt::kGres) {
        auto items = job::ParseGresList(*s->occurrence.value);
        if (!items.ok()) continue;
        std::vector<std::string> parts;
        for (const auto& item : *items) {
          auto it = respelled.find(item.type);
          if (item.name == "gpu" && it != respelled.end() && it->second != item.type) {
            job::GresItem renamed = item;
            renamed.type = it->second;
            parts.push_back(job::FormatGres(renamed));
            whys.push_back(why_[item.type]);
          } else {
            parts.push_back(item.text);
          }
        }
        value = Join(parts, ",");
      } else {
        auto list = job::ParseGpuList(*s->occurrence.value);
        if (!list.ok()) continue;
        std::vector<std::string> parts;
        for (const auto& g : *list) {
          auto it = respelled.find(g.type);
          std::string type = g.type;
          if (it != respelled.end() && it->second != g.type) {
            type = it->second;
            whys.push_back(why_[g.type]);
          }
          parts.push_back(type.empty() ? std::to_string(g.count)
                                       : fmt::format("{}:{}", type, g.count));
        }
        value = Join(parts, ",");
      }
      if (!whys.empty()) Change(*s, value, Join(whys, "; "));
    }
    needs_.nodes = nodes;
    needs_.cpus_per_node = tasks_per_node * (c().cpus_per_task ? *c().cpus_per_task : 1);
    if (c().mem_mb) {
      needs_.memory_per_node_mb = *c().mem_mb;
    } else if (c().mem_per_cpu_mb) {
      needs_.memory_per_node_mb = *c().mem_per_cpu_mb * needs_.cpus_per_node;
    } else if (c().mem_per_gpu_mb) {
      needs_.memory_per_node_mb =
          *c().mem_per_gpu_mb * std::max<std::int64_t>(needs_.gpus_per_node, 1);
    }
    if (c().time_limit) {
      needs_.time_minutes = c().time_limit->minutes;
      needs_.time_unlimited = c().time_limit->infinite();
    }
    NameTheOptions();
  }

  // The options behind each need, for the reasons a partition gives.
  void NameTheOptions() {
    auto named = [&](std::initializer_list<Opt> options) {
      std::string names;
      for (Opt option : options) {
        if (const Setting* s = c().Effective(option)) {
          names += fmt::format("{}--{}", names.empty() ? "" : ", ", s->name());
        }
      }
      return names;
    };
    needs_.gpus_option =
        named({Opt::kGres, Opt::kGpus, Opt::kGpusPerNode, Opt::kGpusPerTask, Opt::kGpusPerSocket});
    needs_.cpus_option = named({Opt::kCpusPerTask, Opt::kNtasksPerNode, Opt::kNtasks});
    needs_.memory_option = named({Opt::kMem, Opt::kMemPerCpu, Opt::kMemPerGpu});
    needs_.nodes_option = named({Opt::kNodes});
    needs_.time_option = named({Opt::kTime});
    needs_.features_option = named({Opt::kConstraint});
  }

  void Features() {
    if (c().features.empty()) return;
    std::set<std::string> have;
    for (const auto& n : target_.nodes) have.insert(n.features.begin(), n.features.end());
    std::map<std::string, std::string> renames;
    for (const auto& f : c().features) {
      std::string spelled = f;
      if (!have.contains(f) && catalog_.Canonical(f)) {
        for (const auto& h : have) {
          if (catalog_.Same(h, f)) {
            spelled = h;
            renames[f] = h;
            break;
          }
        }
      }
      needs_.features.push_back(spelled);
    }
    const Setting* s = c().Effective(Opt::kConstraint);
    if (!renames.empty() && s != nullptr && s->occurrence.value) {
      std::vector<std::string> whys;
      for (const auto& [from, to] : renames) {
        whys.push_back(fmt::format("{} calls the feature {} '{}'", target_.name, from, to));
      }
      Change(*s, ReplaceFeatures(*s->occurrence.value, renames), Join(whys, "; "));
    }
  }

  void AccountAndQos() {
    auto map_one = [&](const std::optional<std::string>& value, Opt option,
                       const std::map<std::string, std::string>& table, const char* what,
                       std::optional<std::string>* need) {
      if (!value) return;
      *need = *value;
      auto it = table.find(*value);
      if (it == table.end() || it->second == *value) return;
      *need = it->second;
      if (const Setting* s = c().Effective(option)) {
        Change(
            *s, it->second,
            fmt::format("{} {} is {} on {} (site policy)", what, *value, it->second, target_.name));
      }
    };
    map_one(c().account, Opt::kAccount, settings_.accounts, "account", &needs_.account);
    map_one(c().qos, Opt::kQos, settings_.qos, "QoS", &needs_.qos);
  }

  // A path the job names that cannot be mapped: what the user should know.
  void PathCaveat(const std::string& where, const std::string& what, const PathMapping& m) {
    using Fate = PathMapping::Fate;
    if (m.fate == Fate::kNoCounterpart) {
      job_.caveats.push_back(fmt::format(
          "{}: {} {} lies under {}'s {} root, which {} has none of (paths.{} in its settings): "
          "it must exist there as written",
          where, what, m.path, ctx_.home, m.root, target_.name, m.root));
    } else if (m.fate == Fate::kOutside) {
      job_.caveats.push_back(fmt::format(
          "{}: {} {} is outside every named root of {} ({}): it must exist on {} as written", where,
          what, m.path, ctx_.home, DescribeRoots(*ctx_.home_roots), target_.name));
    }
  }

  void Paths() {
    using Fate = PathMapping::Fate;
    if (!peer_ || ctx_.home_roots == nullptr || ctx_.target_roots == nullptr ||
        ctx_.home_roots->empty()) {
      return;
    }
    const PathRoots& from = *ctx_.home_roots;
    const PathRoots& to = *ctx_.target_roots;
    auto why = [&](const std::string& root) {
      return fmt::format("{}'s {} root {} is {} on {}", ctx_.home, root, from.Find(root)->path,
                         to.Find(root)->path, target_.name);
    };
    for (Opt option : {Opt::kChdir, Opt::kOutput, Opt::kError, Opt::kInput}) {
      const Setting* s = r_.Effective(option);
      if (s == nullptr || !s->occurrence.value) continue;
      const PathMapping m = MapPath(*s->occurrence.value, from, to);
      if (m.fate == Fate::kMapped) {
        Change(*s, m.path, why(m.root));
      } else {
        PathCaveat(Where(*s), "--" + s->name(), m);
      }
    }
    if (const Setting* e = r_.Effective(Opt::kExport); e != nullptr && e->occurrence.value) {
      std::vector<std::string> items;
      std::vector<std::string> roots;
      for (const std::string& item : SplitList(*e->occurrence.value)) {
        const auto eq = item.find('=');
        if (eq == std::string::npos) {
          items.push_back(item);
          continue;
        }
        const ListMapping l = MapPathList(std::string_view(item).substr(eq + 1), from, to);
        items.push_back(item.substr(0, eq + 1) + l.value);
        for (const PathMapping& m : l.mappings) {
          if (m.fate == Fate::kMapped) {
            if (std::find(roots.begin(), roots.end(), m.root) == roots.end())
              roots.push_back(m.root);
          } else {
            PathCaveat(Where(*e), "--export " + item.substr(0, eq), m);
          }
        }
      }
      if (!roots.empty()) {
        std::vector<std::string> whys;
        for (const auto& root : roots) whys.push_back(why(root));
        job_.export_env = Join(items, ",");
        Change(*e, *job_.export_env, Join(whys, "; "));
      }
    }
    for (const ScriptPath& p : FindScriptPaths(r_.script, from, to)) {
      const std::string where = fmt::format("{}:{}", r_.script_name, p.line);
      if (p.mapping.fate != Fate::kMapped) {
        PathCaveat(where, "the script's path", p.mapping);
      } else if (ctx_.rewrite_script_paths) {
        path_edits_.push_back({p.offset, p.path.size(), p.mapping.path});
        job_.changes.push_back(
            {where, fmt::format("{} -> {}", p.path, p.mapping.path), why(p.mapping.root)});
      } else {
        job_.caveats.push_back(fmt::format(
            "{}: the script names {}, which is {} on {}; it runs as written (paths.rewrite_script: "
            "true rewrites it)",
            where, p.path, p.mapping.path, target_.name));
      }
    }
  }

  void ChoosePartition() {
    const auto fits = FitPartitions(target_, needs_);
    auto fit_of = [&](const std::string& name) -> const PartitionFit* {
      for (const auto& f : fits) {
        if (f.partition->name == name) return &f;
      }
      return nullptr;
    };
    // A hidden partition is the site's own (a preemptor, an admin queue):
    // only a job that names it goes there.
    auto offered = [&](const PartitionFit& f) {
      return f.fits() &&
             (!f.partition->hidden || std::find(c().partitions.begin(), c().partitions.end(),
                                                f.partition->name) != c().partitions.end());
    };
    auto first_fitting = [&]() -> const PartitionFit* {
      if (const cluster::Partition* d = target_.DefaultPartition()) {
        if (const PartitionFit* f = fit_of(d->name); f != nullptr && offered(*f)) return f;
      }
      for (const auto& f : fits) {
        if (offered(f)) return &f;
      }
      return nullptr;
    };
    auto no_partition = [&] {
      std::vector<std::string> why;
      for (const auto& f : fits) why.push_back(fmt::format("{}: {}", f.partition->name, f.problem));
      if (why.empty()) why.push_back("it has no partitions");
      reasons_.push_back(
          fmt::format("no partition of {} can run it ({})", target_.name, Join(why, "; ")));
    };
    for (const auto& f : fits) {
      if (offered(f)) job_.fitting_partitions.push_back(f.partition->name);
    }
    const Setting* asked = c().Effective(Opt::kPartition);
    if (!ctx_.partition.empty() && component_ == 0) {
      // Placement pins a partition it has checked.
      const PartitionFit* f = fit_of(ctx_.partition);
      if (f == nullptr || !f->fits()) {
        reasons_.push_back(fmt::format("partition {} of {} cannot run it ({})", ctx_.partition,
                                       target_.name,
                                       f == nullptr ? "no such partition" : f->problem));
        return;
      }
      job_.partitions = {ctx_.partition};
      const std::vector<std::string> pinned = {ctx_.partition};
      if (c().partitions == pinned) {
        job_.partition_note = ctx_.partition + " (as asked)";
        return;
      }
      const std::string why = c().partitions.empty()
                                  ? "the earliest of the partitions that can run it"
                                  : "the partition of this cluster that starts it first";
      job_.partition_note = fmt::format("{} ({})", ctx_.partition, why);
      if (asked != nullptr) {
        Change(*asked, ctx_.partition, why);
      } else {
        added_.push_back({"partition", ctx_.partition});
        job_.changes.push_back({"(added)", "--partition=" + ctx_.partition, why});
      }
      return;
    }
    if (c().partitions.empty()) {
      const PartitionFit* chosen = first_fitting();
      if (chosen == nullptr) return no_partition();
      auto& fp = job_.fitting_partitions;
      std::stable_partition(fp.begin(), fp.end(),
                            [&](const std::string& p) { return p == chosen->partition->name; });
      const cluster::Partition* d = target_.DefaultPartition();
      if (d != nullptr && chosen->partition == d) {
        job_.partition_note = fmt::format("{} (the default)", d->name);
        return;
      }
      job_.partitions = {chosen->partition->name};
      const PartitionFit* dfit = d != nullptr ? fit_of(d->name) : nullptr;
      const std::string why =
          d == nullptr ? fmt::format("{} has no default partition", target_.name)
                       : fmt::format("the default partition {} cannot run it ({})", d->name,
                                     dfit != nullptr ? dfit->problem : "unknown");
      job_.partition_note = fmt::format("{} (chosen: {})", chosen->partition->name, why);
      added_.push_back({"partition", chosen->partition->name});
      job_.changes.push_back({"(added)", "--partition=" + chosen->partition->name, why});
      return;
    }
    // The user's own partitions, where they exist here and fit.
    std::vector<std::string> kept;
    std::vector<std::string> problems;
    for (const auto& p : c().partitions) {
      const PartitionFit* f = fit_of(p);
      if (f != nullptr && f->fits()) {
        kept.push_back(p);
      } else {
        problems.push_back(f == nullptr ? fmt::format("{} has no partition {}", target_.name, p)
                                        : fmt::format("{}: {}", p, f->problem));
      }
    }
    std::string why;
    if (kept.empty()) {
      // The configured map.
      for (const auto& p : c().partitions) {
        auto it = settings_.partitions.find(p);
        if (it == settings_.partitions.end()) continue;
        const PartitionFit* f = fit_of(it->second);
        if (f != nullptr && f->fits()) {
          kept.push_back(it->second);
          why =
              fmt::format("partition {} is {} on {} (configuration)", p, it->second, target_.name);
          break;
        }
        problems.push_back(fmt::format("the configured {} -> {} cannot run it ({})", p, it->second,
                                       f == nullptr ? "no such partition" : f->problem));
      }
    }
    if (kept.empty()) {
      const PartitionFit* chosen = first_fitting();
      if (chosen == nullptr) return no_partition();
      kept.push_back(chosen->partition->name);
      why = fmt::format("{}; {} can run it", Join(problems, "; "), chosen->partition->name);
    }
    job_.partitions = kept;
    job_.partition_note = Join(kept, ",") + (why.empty() ? " (as asked)" : " (" + why + ")");
    // With partitions asked for, only those (as Slurm would) are candidates.
    job_.fitting_partitions = kept;
    if (kept != c().partitions && asked != nullptr) {
      Change(*asked, Join(kept, ","), why.empty() ? Join(problems, "; ") : why);
    }
  }

  // -w names nodes: a cluster without one of them cannot run the job (sbatch
  // says "Invalid node name specified"). A name with a '/' is a file of names,
  // read by sbatch where it runs: not checked here.
  void NodeNames() {
    const Setting* s = c().Effective(Opt::kNodelist);
    if (s == nullptr || !c().nodelist || target_.nodes.empty()) return;
    if (c().nodelist->find('/') != std::string::npos) return;
    auto names = cluster::ExpandHostlist(*c().nodelist);
    if (!names.ok()) {
      reasons_.push_back(fmt::format("{}: --{}={}: {}", Where(*s), s->name(), *c().nodelist,
                                     names.status().message()));
      return;
    }
    std::vector<std::string> missing;
    for (const auto& n : *names) {
      const bool known = std::any_of(target_.nodes.begin(), target_.nodes.end(),
                                     [&](const cluster::Node& node) { return node.name == n; });
      if (!known) missing.push_back(n);
    }
    if (!missing.empty()) {
      reasons_.push_back(fmt::format("{}: --{}={}: {} has no node {}", Where(*s), s->name(),
                                     *c().nodelist, target_.name, Join(missing, ", ")));
    }
  }

  // An option that is none of Slurm 22.05's belongs to a SPANK plugin (pyxis'
  // --container-image), or to a newer Slurm. It travels as written to a
  // cluster whose sbatch lists it (getopt's unique prefixes too), and rules
  // out a Slurm 22.05 cluster whose sbatch does not ("unrecognized option").
  // A cluster of another Slurm release, or whose options are not known, gets
  // it as written, with a note.
  void PluginOptions() {
    for (const Setting& s : c().settings) {
      const bool plugin = s.occurrence.spec == nullptr || s.id() == Opt::kSpank;
      if (!plugin || !plugin_options_seen_.insert(s.name()).second) continue;
      if (!target_.plugin_options_known) {
        job_.caveats.push_back(fmt::format(
            "{}: --{} is no option of Slurm's; whether sbatch on {} has a plugin that takes it is "
            "not known: left as written",
            Where(s), s.name(), target_.name));
        continue;
      }
      if (ListsOption(target_.plugin_options, s.name())) continue;
      if (!target_.slurm_version.empty() &&
          target_.slurm_version.find("22.05") == std::string::npos) {
        job_.caveats.push_back(fmt::format(
            "{}: --{} is none of Slurm 22.05's options and no plugin of {} lists it; {} runs {}, "
            "whose sbatch decides: left as written",
            Where(s), s.name(), target_.name, target_.name, target_.slurm_version));
        continue;
      }
      reasons_.push_back(fmt::format(
          "{}: sbatch on {} does not recognise --{} (\"unrecognized option\": no SPANK plugin "
          "there registers it)",
          Where(s), target_.name, s.name()));
    }
  }

  // The script's own steps: an srun (or salloc) option only a plugin takes
  // must be one this cluster's srun lists (its sbatch's plugins or its
  // srun's own), or the step fails there at once. As for the job's own
  // options, a cluster of another release, or whose options are not known,
  // gets it with a note.
  void StepOptions() {
    const bool known = target_.plugin_options_known || target_.srun_plugin_options_known;
    std::vector<std::string> listed = target_.srun_plugin_options;
    listed.insert(listed.end(), target_.plugin_options.begin(), target_.plugin_options.end());
    for (const job::StepPluginOption& o : r_.step_plugin_options) {
      const std::string where = fmt::format("{}:{}", r_.script_name, o.line);
      if (!known) {
        job_.caveats.push_back(fmt::format(
            "{}: {} --{} is no option of Slurm's; whether {}'s {} has a plugin that takes it is "
            "not known",
            where, o.program, o.name, target_.name, o.program));
        continue;
      }
      if (ListsOption(listed, o.name)) continue;
      if (!target_.slurm_version.empty() &&
          target_.slurm_version.find("22.05") == std::string::npos) {
        job_.caveats.push_back(fmt::format(
            "{}: {} --{} is none of Slurm 22.05's options and no plugin of {} lists it; {} runs "
            "{}, whose {} decides",
            where, o.program, o.name, target_.name, target_.name, target_.slurm_version,
            o.program));
        continue;
      }
      reasons_.push_back(fmt::format(
          "{}: the script's step '{} --{}' would fail at once on {}: its {} does not recognise "
          "--{} (no SPANK plugin there registers it)",
          where, o.program, o.name, target_.name, o.program, o.name));
    }
  }

  // getopt_long's rule: the name itself, or an unambiguous prefix of one.
  static bool ListsOption(const std::vector<std::string>& options, const std::string& name) {
    int prefixes = 0;
    for (const auto& o : options) {
      if (o == name) return true;
      if (o.starts_with(name)) ++prefixes;
    }
    return prefixes == 1;
  }

  // The sky jobs --dependency named are answered (skyslurmd waited for
  // them): what is left goes in the last occurrence, which is the one sbatch
  // reads; the others go, so that none of them becomes the one read.
  void ResolvedDependency() {
    if (!r_.dependency_resolved) return;
    const Setting* effective = r_.Effective(Opt::kDependency);
    const std::string why = "skyslurmd waits for the sky jobs it names before it sends the job";
    for (const Setting& s : r_.settings) {
      if (s.id() != Opt::kDependency) continue;
      if (&s == effective && r_.dependency && !r_.dependency->empty()) {
        Change(s, *r_.dependency, why);
        continue;
      }
      job_.changes.push_back(
          {Where(s), fmt::format("--{}={} left out", s.name(), s.occurrence.value.value_or("")),
           why});
      dropped_.insert(&s);
    }
  }

  void Modules() {
    if (r_.modules.empty()) return;
    if (!target_.modules_known) {
      job_.caveats.push_back(fmt::format(
          "the modules of {} are not known; module lines are left as written", target_.name));
      return;
    }
    // What the script was written against: the home's modules (the target's
    // own when it is the home).
    const std::vector<std::string>* home = peer_ ? ctx_.home_modules : &target_.modules;
    for (const auto& use : r_.modules) {
      if (use.dynamic) {
        job_.caveats.push_back(fmt::format(
            "{}:{}: 'module {} {}' is computed when the job runs; it cannot be checked ahead",
            r_.script_name, use.line, use.verb, use.word));
        continue;
      }
      ModuleResolution res = ResolveModule(use.word, target_.modules, settings_.modules);
      if (res.found && res.module == use.word) continue;
      // Only a module the home has can be translated; one it lacks too
      // (a user's own module path, a site default) stays as written. With
      // the home's modules unknown (home unreachable), the script is taken as
      // written for modules the home has: translated, or this cluster ruled out.
      const bool at_home = home == nullptr || IsAvailable(use.word, *home);
      if (!at_home) {
        std::string why;
        if (!peer_) {
          why = fmt::format(
              "{} (home) does not list it, so it is left as written, as sbatch "
              "submits it",
              target_.name);
        } else {
          why = fmt::format("{} (home) has no module {} either, so it is left as written",
                            ctx_.home, use.word);
        }
        job_.caveats.push_back(
            fmt::format("{}:{}: module {}: {}", r_.script_name, use.line, use.word, why));
        continue;
      }
      if (!res.found) {
        reasons_.push_back(fmt::format("module {} ({}:{}): {} on {}", use.word, r_.script_name,
                                       use.line, res.why, target_.name));
        continue;
      }
      module_edits_.push_back({use.offset, use.length, res.module});
      job_.changes.push_back({fmt::format("{}:{}", r_.script_name, use.line),
                              fmt::format("module {} -> {}", use.word, res.module), res.why});
    }
  }

  // `module load word` works where the module is listed: "name/version"
  // exactly, or "name" (its default version) when any version is there.
  static bool IsAvailable(const std::string& word, const std::vector<std::string>& modules) {
    const bool versioned = word.find('/') != std::string::npos;
    for (const auto& m : modules) {
      if (m == word) return true;
      if (!versioned && m.size() > word.size() && m.starts_with(word) && m[word.size()] == '/') {
        return true;
      }
    }
    return false;
  }

  // Whether an occurrence is not sent as written: a --sky-* option, one
  // with a new value, or one left out.
  bool Replaced(const Setting& s) const {
    return IsSky(s) || new_values_.contains(&s) || dropped_.contains(&s);
  }

  // The words an occurrence becomes: as written, or --name=new, or nothing.
  std::vector<std::string> WordsFor(const std::vector<const Setting*>& group) const {
    bool touched = false;
    for (const Setting* s : group) touched = touched || Replaced(*s);
    if (!touched) return group.front()->occurrence.words;
    std::vector<std::string> words;
    for (const Setting* s : group) {
      if (IsSky(*s) || dropped_.contains(s)) continue;
      auto it = new_values_.find(s);
      if (it != new_values_.end()) {
        words.push_back(fmt::format("--{}={}", s->name(), it->second));
      } else if (s->occurrence.value) {
        words.push_back(fmt::format("--{}={}", s->name(), *s->occurrence.value));
      } else {
        words.push_back("--" + s->name());
      }
    }
    return words;
  }

  bool Touched(const std::vector<const Setting*>& group) const {
    for (const Setting* s : group) {
      if (Replaced(*s)) return true;
    }
    return false;
  }

  // Occurrences sharing words (bundled short options) travel together.
  // Each option is its own component's (a copy carried on to a later
  // component, or the environment's there, is not written again).
  template <typename Pred>
  std::vector<std::vector<const Setting*>> Groups(Pred pred) const {
    std::vector<std::vector<const Setting*>> groups;
    std::vector<const Setting*> all;
    for (std::size_t k = 0; k < r_.ComponentCount(); ++k) {
      for (const Setting& s : r_.Component(k).settings) {
        if (s.inherited || (k > 0 && s.origin.kind == Origin::Kind::kEnvironment)) continue;
        all.push_back(&s);
      }
    }
    for (const Setting* each : all) {
      const Setting& s = *each;
      if (!pred(s)) continue;
      if (!groups.empty() && s.occurrence.bundled && groups.back().front()->occurrence.bundled &&
          groups.back().front()->occurrence.first_word == s.occurrence.first_word &&
          groups.back().front()->origin.directive == s.origin.directive) {
        groups.back().push_back(&s);
      } else {
        groups.push_back({&s});
      }
    }
    return groups;
  }

  // The index of the directive that starts each later component of a
  // heterogeneous job in the script (its hetjob line), by component.
  std::map<std::size_t, std::size_t> SeparatorDirectives() const {
    std::map<std::size_t, std::size_t> at;
    std::size_t k = 0;
    for (std::size_t d = 0; d < r_.directives.directives.size(); ++d) {
      if (r_.directives.directives[d].het_separator) at[++k] = d;
    }
    return at;
  }

  // The command line's options (a job written with ':' groups is not
  // translated: Portability), then, for a job whose script is not sent
  // (--wrap: sbatch writes its own; salloc and srun have none), what
  // translation added, which no #SBATCH line can carry.
  void CommandLineWords() {
    for (const auto& group :
         Groups([](const Setting& s) { return s.origin.kind == Origin::Kind::kCommandLine; })) {
      for (auto& w : WordsFor(group)) job_.args.push_back(std::move(w));
    }
    if (r_.wrap.has_value() || r_.script.empty()) {
      for (const auto& [name, value] : added_) {
        job_.args.push_back(fmt::format("--{}={}", name, value));
      }
    }
  }

  void Rewrite() {
    // Options from the environment do not travel: they become arguments,
    // before the command line's, which keeps Slurm's precedence.
    for (const Setting& s : r_.settings) {
      if (s.origin.kind != Origin::Kind::kEnvironment || IsSky(s) || dropped_.contains(&s)) {
        continue;
      }
      auto it = new_values_.find(&s);
      const std::optional<std::string>& value =
          it != new_values_.end() ? std::optional<std::string>(it->second) : s.occurrence.value;
      job_.args.push_back(value ? fmt::format("--{}={}", s.name(), *value) : "--" + s.name());
    }
    CommandLineWords();

    // The script: module words first (byte offsets, from the end), then
    // directive lines, then the header.
    std::string script = r_.script;
    std::vector<std::tuple<std::size_t, std::size_t, std::string>> edits;
    for (const auto& [offset, length, text] : module_edits_) {
      edits.emplace_back(offset, length, QuoteShellWord(text));
    }
    for (const auto& [offset, length, text] : path_edits_) {
      // A path inside a module word (module load /path/to/file) goes with it.
      bool inside = false;
      for (const auto& m : module_edits_) {
        inside = inside ||
                 (offset < std::get<0>(m) + std::get<1>(m) && std::get<0>(m) < offset + length);
      }
      if (!inside) edits.emplace_back(offset, length, text);
    }
    std::sort(edits.begin(), edits.end(),
              [](const auto& a, const auto& b) { return std::get<0>(a) > std::get<0>(b); });
    for (const auto& [offset, length, text] : edits) script.replace(offset, length, text);
    std::map<int, std::vector<std::string>> replacement;  // line -> new lines
    // What sbatch reads of the script sent: the header's #SBATCH lines of
    // what translation added first, then each #SBATCH line as it is there.
    if (!r_.wrap.has_value() && !r_.script.empty()) {
      for (const auto& [name, value] : added_) {
        job_.script_options.push_back(fmt::format("--{}={}", name, value));
      }
    }
    // What translation added to a later component goes right after its
    // hetjob line.
    std::map<std::size_t, std::vector<std::string>> added_after;  // directive -> lines
    for (const auto& [k, d] : SeparatorDirectives()) {
      if (auto it = component_added_.find(k); it != component_added_.end()) {
        for (const auto& [name, value] : it->second) {
          added_after[d].push_back(fmt::format("{} --{}={}", r_.directives.directives[d].magic,
                                               name, QuoteDirectiveWord(value)));
        }
      }
    }
    for (std::size_t d = 0; d < r_.directives.directives.size(); ++d) {
      const job::Directive& directive = r_.directives.directives[d];
      auto groups = Groups([&](const Setting& s) {
        return s.origin.kind == Origin::Kind::kDirective && s.origin.directive == d;
      });
      bool touched = false;
      for (const auto& g : groups) touched = touched || Touched(g);
      const bool read = directive.magic == "#SBATCH";
      if (auto it = added_after.find(d); it != added_after.end() && !touched) {
        std::vector<std::string> lines = {directive.text};
        lines.insert(lines.end(), it->second.begin(), it->second.end());
        replacement[directive.line] = lines;
      }
      if (!touched) {
        if (read) {
          job_.script_options.insert(job_.script_options.end(), directive.words.begin(),
                                     directive.words.end());
        }
        continue;
      }
      std::vector<std::string> words;
      for (const auto& g : groups) {
        for (auto& w : WordsFor(g)) words.push_back(std::move(w));
      }
      if (read) job_.script_options.insert(job_.script_options.end(), words.begin(), words.end());
      std::vector<std::string> lines = {"#" + directive.text};
      if (!words.empty() || directive.het_separator) {
        std::string line = directive.magic;
        if (directive.het_separator) line.append(" hetjob");
        // append(): GCC 12 -O3's false -Wrestrict on " " + string (bug 105651).
        for (const auto& w : words) line.append(" ").append(QuoteDirectiveWord(w));
        lines.push_back(line);
      }
      if (auto it = added_after.find(d); it != added_after.end()) {
        lines.insert(lines.end(), it->second.begin(), it->second.end());
      }
      replacement[directive.line] = lines;
    }
    if (replacement.empty() && module_edits_.empty() && job_.changes.empty() && added_.empty()) {
      job_.script = r_.script;  // nothing to change: the script as written
      return;
    }
    std::vector<std::string> out_lines;
    std::size_t start = 0;
    int line_no = 0;
    while (start < script.size()) {
      auto end = script.find('\n', start);
      const bool has_newline = end != std::string::npos;
      if (!has_newline) end = script.size();
      std::string line = script.substr(start, end - start);
      start = end + 1;
      ++line_no;
      if (auto it = replacement.find(line_no); it != replacement.end()) {
        for (auto& l : it->second) out_lines.push_back(l);
      } else {
        out_lines.push_back(std::move(line));
      }
      if (!has_newline) no_final_newline_ = true;
    }
    std::vector<std::string> header;
    if (!job_.changes.empty() || !added_.empty()) {
      header.push_back(fmt::format("# skyslurm: translated for cluster {}{}", target_.name,
                                   peer_ ? fmt::format(" (written for {})", ctx_.home) : ""));
      for (const auto& c : job_.changes) {
        // One line each, whatever the values hold.
        std::string line = fmt::format("# skyslurm: {}: {} ({})", c.where, c.what, c.why);
        std::replace(line.begin(), line.end(), '\n', ' ');
        std::replace(line.begin(), line.end(), '\r', ' ');
        header.push_back(std::move(line));
      }
      for (const auto& [name, value] : added_) {
        header.push_back(fmt::format("#SBATCH --{}={}", name, QuoteDirectiveWord(value)));
      }
    }
    std::string text;
    for (std::size_t i = 0; i < out_lines.size(); ++i) {
      text += out_lines[i];
      if (i + 1 < out_lines.size() || !no_final_newline_) text += '\n';
      if (i == 0) {
        for (const auto& h : header) text += h + '\n';
      }
    }
    job_.script = std::move(text);
  }

  static std::string QuoteShellWord(const std::string& word) {
    if (word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                               "@%+=:,./_-") == std::string::npos) {
      return word;
    }
    std::string q = "'";
    for (char c : word) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  }

  const Request& r_;
  const cluster::Description& target_;
  const TranslateContext& ctx_;
  const config::ClusterSettings& settings_;
  const catalog::AcceleratorCatalog& catalog_;
  bool peer_ = false;
  std::size_t component_ = 0;
  // A heterogeneous job's partition notes, component 0's first, and what
  // translation added to each later component (its own #SBATCH lines).
  std::vector<std::string> component_notes_;
  std::map<std::size_t, std::vector<std::pair<std::string, std::string>>> component_added_;
  Needs first_needs_;
  std::vector<std::pair<std::string, std::string>> first_added_;
  std::vector<std::string> first_partitions_;
  // Plugin options already judged (a later component carries them on).
  std::set<std::string> plugin_options_seen_;
  bool gpu_missing_ = false;
  bool no_final_newline_ = false;
  Needs needs_;
  TranslatedJob job_;
  std::vector<std::string> reasons_;
  std::map<const Setting*, std::string> new_values_;
  std::set<const Setting*> dropped_;  // occurrences left out
  std::map<std::string, std::string> why_;
  std::vector<std::tuple<std::size_t, std::size_t, std::string>> module_edits_;
  // The script's paths rewritten for the target (paths.rewrite_script).
  std::vector<std::tuple<std::size_t, std::size_t, std::string>> path_edits_;
  std::vector<std::pair<std::string, std::string>> added_;
};

}  // namespace

std::string QuoteDirectiveWord(const std::string& word) {
  const bool plain = !word.empty() && word.find_first_of(" \t\"'\\#") == std::string::npos;
  if (plain) return word;
  std::string q = "\"";
  for (char c : word) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

Translation TranslateForSlurm(const job::Request& request, const cluster::Description& target,
                              const TranslateContext& context) {
  static const config::ClusterSettings kNoSettings;
  static const catalog::AcceleratorCatalog kBuiltin;
  TranslateContext ctx = context;
  if (ctx.settings == nullptr) ctx.settings = &kNoSettings;
  if (ctx.catalog == nullptr) ctx.catalog = &kBuiltin;
  return Translator(request, target, ctx).Run();
}

}  // namespace skyslurm::translate
