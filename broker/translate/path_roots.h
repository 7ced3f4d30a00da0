// The named roots of clusters' filesystems (home, scratch, project...) and
// how a path of one cluster is spelled on another: a path under the home's
// root `scratch` is the same place under the target's `scratch`. Pure
// functions of the configuration (clusters.<name>.paths, `%u` for the user's
// login name on that cluster) and the user names.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace skyslurm::translate {

// One cluster's roots, `%u` replaced by the user's login name there; the
// unexpanded pattern is kept too (a path may spell Slurm's own %u).
struct PathRoot {
  std::string name;     // "home", "scratch", ...
  std::string path;     // "/lustre/scratch/skyuser1"
  std::string pattern;  // "/lustre/scratch/%u"
};
struct PathRoots {
  std::vector<PathRoot> roots;  // by name
  const PathRoot* Find(std::string_view name) const;
  bool empty() const { return roots.empty(); }
};

// The roots of `patterns` (name -> pattern) for `user`; trailing slashes
// dropped, `%%` a literal `%`.
PathRoots ExpandRoots(const std::map<std::string, std::string>& patterns, const std::string& user);

// A folder setting (a cluster's workdir) for `user` there: %u the user's
// login name, %% a '%', a leading ~ the home there. `home` empty: the
// home is the folder commands start in there, so "~/x" becomes "x" and
// "~" the empty path (the home itself).
std::string ExpandFolder(std::string_view pattern, const std::string& user,
                         const std::string& home);

// "home /home/skyuser1, scratch /lustre/scratch/skyuser1" (for explain).
std::string DescribeRoots(const PathRoots& roots);

struct PathMapping {
  enum class Fate {
    kKept,           // relative, or no roots on either side: left as it is
    kSame,           // under a root that is the same path on both clusters
    kMapped,         // under a root the target has elsewhere: `path` is its spelling there
    kNoCounterpart,  // under a root of the home that the target has not
    kOutside,        // absolute and under no root of the home
  };
  Fate fate = Fate::kKept;
  std::string path;  // the path on the target (the original unless kMapped)
  std::string root;  // the root's name (kSame, kMapped, kNoCounterpart)
};

// `path` (absolute, as a job option gives it) on the target: the longest
// root of `from` it lies under (at a component boundary, as expanded or as
// the pattern spells it), then the target's root of that name. A path that
// also lies under a root of the target (`to`), as it is, is kSame.
PathMapping MapPath(std::string_view path, const PathRoots& from, const PathRoots& to);

// A value that may hold several paths (`--export` values: PATH-like lists
// separated by ':'): each absolute element mapped. `changed` says whether
// any was; `unmapped` lists the elements under a root with no counterpart
// or outside every root.
struct ListMapping {
  std::string value;
  bool changed = false;
  std::vector<PathMapping> mappings;  // of each absolute element
};
ListMapping MapPathList(std::string_view value, const PathRoots& from, const PathRoots& to);

// The absolute paths a script's text names under a root of `from` (in
// words: quotes, `=`, `:` and blanks end them), with their line (1-based),
// byte offset and mapping; paths under no root are not listed (a script
// names /usr/bin, /dev/null...).
struct ScriptPath {
  int line = 0;
  std::size_t offset = 0;
  std::string path;
  PathMapping mapping;
};
std::vector<ScriptPath> FindScriptPaths(std::string_view script, const PathRoots& from,
                                        const PathRoots& to);

}  // namespace skyslurm::translate
