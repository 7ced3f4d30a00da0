#include "broker/translate/path_roots.h"

#include <gtest/gtest.h>

namespace skyslurm::translate {
namespace {

using Fate = PathMapping::Fate;

const PathRoots kAlpha = ExpandRoots(
    {{"home", "/home/%u"}, {"scratch", "/scratch/%u/"}, {"project", "/proj/ml"}}, "ana");
const PathRoots kBeta =
    ExpandRoots({{"home", "/home/%u"}, {"scratch", "/lustre/scratch/%u"}}, "ana_b");

TEST(PathRootsTest, ExpandsTheUserAndDropsTrailingSlashes) {
  ASSERT_EQ(kAlpha.roots.size(), 3u);
  EXPECT_EQ(kAlpha.Find("scratch")->path, "/scratch/ana");
  EXPECT_EQ(kAlpha.Find("scratch")->pattern, "/scratch/%u");
  EXPECT_EQ(ExpandRoots({{"odd", "/a/100%%/%u"}}, "x").roots[0].path, "/a/100%/x");
  EXPECT_EQ(DescribeRoots(kBeta), "home /home/ana_b, scratch /lustre/scratch/ana_b");
  EXPECT_EQ(kBeta.Find("project"), nullptr);
  // "/" holds every path: no root; nor one that needs an unknown user.
  EXPECT_TRUE(ExpandRoots({{"all", "/"}, {"u", "/%u/"}}, "").empty());
  EXPECT_EQ(ExpandRoots({{"home", "/home/%u/"}}, "x").roots[0].path, "/home/x");
}

TEST(PathRootsTest, AFolderSettingTakesTheUserAndTheHome) {
  EXPECT_EQ(ExpandFolder("/scratch/%u", "ana", ""), "/scratch/ana");
  EXPECT_EQ(ExpandFolder("/a/100%%/%u", "ana", ""), "/a/100%/ana");
  // A peer's home is where its commands start: relative to it.
  EXPECT_EQ(ExpandFolder("~/jobs", "ana", ""), "jobs");
  EXPECT_EQ(ExpandFolder("~", "ana", ""), "");
  // Here, the home is known.
  EXPECT_EQ(ExpandFolder("~/jobs", "ana", "/home/ana/"), "/home/ana/jobs");
  EXPECT_EQ(ExpandFolder("/x~/y", "ana", "/home/ana"), "/x~/y");
}

TEST(PathRootsTest, APathUnderARootIsSpelledAsTheTargetSpellsThatRoot) {
  PathMapping m = MapPath("/scratch/ana/logs/%j.out", kAlpha, kBeta);
  EXPECT_EQ(m.fate, Fate::kMapped);
  EXPECT_EQ(m.path, "/lustre/scratch/ana_b/logs/%j.out");
  EXPECT_EQ(m.root, "scratch");
  // The root itself, and a trailing slash kept.
  EXPECT_EQ(MapPath("/scratch/ana", kAlpha, kBeta).path, "/lustre/scratch/ana_b");
  EXPECT_EQ(MapPath("/scratch/ana/", kAlpha, kBeta).path, "/lustre/scratch/ana_b/");
  // Slurm's own %u in the path: the target's pattern, Slurm expands it there.
  EXPECT_EQ(MapPath("/scratch/%u/out", kAlpha, kBeta).path, "/lustre/scratch/%u/out");
  // The user's name differs: home maps too.
  EXPECT_EQ(MapPath("/home/ana/proj", kAlpha, kBeta).path, "/home/ana_b/proj");
}

TEST(PathRootsTest, OnlyWholeComponentsMatch) {
  // /scratch/anat is not under /scratch/ana.
  EXPECT_EQ(MapPath("/scratch/anat/x", kAlpha, kBeta).fate, Fate::kOutside);
}

TEST(PathRootsTest, TheLongestRootWins) {
  const PathRoots from = ExpandRoots({{"home", "/data/%u"}, {"big", "/data/%u/big"}}, "u");
  const PathRoots to = ExpandRoots({{"home", "/h/%u"}, {"big", "/b/%u"}}, "u");
  EXPECT_EQ(MapPath("/data/u/big/x", from, to).path, "/b/u/x");
  EXPECT_EQ(MapPath("/data/u/small/x", from, to).path, "/h/u/small/x");
}

TEST(PathRootsTest, WhatCannotBeMappedSaysWhy) {
  PathMapping project = MapPath("/proj/ml/data", kAlpha, kBeta);
  EXPECT_EQ(project.fate, Fate::kNoCounterpart);
  EXPECT_EQ(project.root, "project");
  EXPECT_EQ(project.path, "/proj/ml/data");
  EXPECT_EQ(MapPath("/opt/data/x", kAlpha, kBeta).fate, Fate::kOutside);
  // The same path on both: nothing to change.
  const PathRoots shared = ExpandRoots({{"home", "/home/%u"}}, "ana");
  EXPECT_EQ(MapPath("/home/ana/x", kAlpha, shared).fate, Fate::kSame);
  // Outside the home's roots but under one of the target's as written.
  EXPECT_EQ(MapPath("/lustre/scratch/ana_b/x", kAlpha, kBeta).fate, Fate::kSame);
}

TEST(PathRootsTest, RelativeAndSystemPathsAndNoRootsAreKept) {
  EXPECT_EQ(MapPath("logs/x.out", kAlpha, kBeta).fate, Fate::kKept);
  EXPECT_EQ(MapPath("/dev/null", kAlpha, kBeta).fate, Fate::kKept);
  EXPECT_EQ(MapPath("/scratch/ana/x", PathRoots{}, kBeta).fate, Fate::kKept);
  EXPECT_EQ(MapPath("", kAlpha, kBeta).fate, Fate::kKept);
}

TEST(PathRootsTest, ListsMapEachAbsoluteElement) {
  ListMapping l = MapPathList("/scratch/ana/bin:/usr/bin:rel:/proj/ml", kAlpha, kBeta);
  EXPECT_TRUE(l.changed);
  EXPECT_EQ(l.value, "/lustre/scratch/ana_b/bin:/usr/bin:rel:/proj/ml");
  ASSERT_EQ(l.mappings.size(), 3u);
  EXPECT_EQ(l.mappings[2].fate, Fate::kNoCounterpart);
  EXPECT_FALSE(MapPathList("plain value", kAlpha, kBeta).changed);
  EXPECT_EQ(MapPathList("a::b:", kAlpha, kBeta).value, "a::b:");
}

TEST(PathRootsTest, AScriptsPathsUnderRootsAreFoundWithTheirLines) {
  const std::string script =
      "#!/bin/bash\n"
      "#SBATCH -o /scratch/ana/slurm.out\n"
      "# see /scratch/ana/notes\n"
      "cd /scratch/ana/run && python3 train.py --data=/scratch/ana/data:/proj/ml/x\n"
      "cp \"/home/ana/cfg.yaml\" $HOME/x /usr/bin/env /scratch/anat/no\n";
  std::vector<ScriptPath> found = FindScriptPaths(script, kAlpha, kBeta);
  ASSERT_EQ(found.size(), 4u);
  EXPECT_EQ(found[0].line, 4);
  EXPECT_EQ(found[0].path, "/scratch/ana/run");
  EXPECT_EQ(found[0].mapping.path, "/lustre/scratch/ana_b/run");
  EXPECT_EQ(script.substr(found[0].offset, found[0].path.size()), found[0].path);
  EXPECT_EQ(found[1].path, "/scratch/ana/data");
  EXPECT_EQ(found[2].path, "/proj/ml/x");
  EXPECT_EQ(found[2].mapping.fate, Fate::kNoCounterpart);
  EXPECT_EQ(found[3].line, 5);
  EXPECT_EQ(found[3].path, "/home/ana/cfg.yaml");
  EXPECT_TRUE(FindScriptPaths(script, PathRoots{}, kBeta).empty());
}

}  // namespace
}  // namespace skyslurm::translate
