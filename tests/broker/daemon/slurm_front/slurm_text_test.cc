#include "broker/daemon/slurm_front/slurm_text.h"

#include <gtest/gtest.h>

#include <map>

namespace skyslurm::daemon {
namespace {

const IdMap kBeta = {{"77", 805306445}};

TEST(SlurmTextTest, AnIdValueKeepsItsSuffix) {
  EXPECT_EQ(MapIdValue("77", kBeta), "805306445");
  EXPECT_EQ(MapIdValue("77_7", kBeta), "805306445_7");
  EXPECT_EQ(MapIdValue("77.batch", kBeta), "805306445.batch");
  EXPECT_EQ(MapIdValue("78", kBeta), "78");
  EXPECT_EQ(MapIdValue("777", kBeta), "777");
  EXPECT_EQ(MapIdValue("JOBID", kBeta), "JOBID");
}

TEST(SlurmTextTest, SqueueFieldsKeepTheirWidthAndJustification) {
  const std::string marked = MarkSqueueFormat("%.18i %.2t %10A|%F %%i %j");
  EXPECT_EQ(marked.find("%.18i"), std::string::npos);
  EXPECT_NE(marked.find("%%i"), std::string::npos);  // a literal stays literal
  EXPECT_NE(marked.find("%.2t"), std::string::npos);
  // What squeue prints for it: the markers around each id, no width.
  auto field = [](const std::string& spec, const std::string& value) {
    return "\x1f" + spec + "\x1d" + value + "\x1e";
  };
  const std::string printed = field(".18", "JOBID") + " ST " + field("10", "ARRAY_JOB_ID") + "|" +
                              field("", "ARRAY_JOB_ID") + " %i NAME\n" + field(".18", "77") +
                              " PD " + field("10", "77") + "|" + field("", "77") + " %i job\n" +
                              field(".18", "78") + " R  " + field("10", "78") + "|" +
                              field("", "78") + " %i other\n";
  EXPECT_EQ(UnmarkSqueueOutput(printed, kBeta),
            "             JOBID ST ARRAY_JOB_|ARRAY_JOB_ID %i NAME\n"
            "         805306445 PD 805306445 |805306445 %i job\n"
            "                78 R  78        |78 %i other\n");
}

// squeue of routed jobs: one skyslurmd has not seen end shows CG/COMPLETING
// while its cluster says CD; asked with --states=all only to find it, the
// other ended jobs' lines go.
TEST(SlurmTextTest, SqueueShowsAnUnsettledEndedJobAsCompleting) {
  const std::string format = MarkSqueueFormat("%.18i %.2t %.10T", false, true);
  EXPECT_EQ(format, "\x1f.18\x1d%i\x1e \x1ft.2\x1d%t\x1e \x1fT.10\x1d%T\x1e\x1c%i\x1c%T");
  // What squeue prints for it: each marked field's value, no width.
  auto line = [](const std::string& id, const std::string& st, const std::string& state) {
    return "\x1f.18\x1d" + id + "\x1e \x1ft.2\x1d" + st + "\x1e \x1fT.10\x1d" + state + "\x1e\x1c" +
           id + "\x1c" + state + "\n";
  };
  const std::string printed = line("JOBID", "ST", "STATE") + line("77", "CD", "COMPLETED") +
                              line("78", "CD", "COMPLETED") + line("79", "R", "RUNNING");
  const Unsettled unsettled = {"77", "79"};
  const SqueueHold widened{&unsettled, true};
  EXPECT_EQ(UnmarkSqueueOutput(printed, {{"77", 805306445}, {"79", 805306447}}, &widened),
            "             JOBID ST      STATE\n"
            "         805306445 CG COMPLETING\n"
            "         805306447  R    RUNNING\n");
  const SqueueHold asked{&unsettled, false};  // the user's own -t all
  EXPECT_EQ(UnmarkSqueueOutput(printed, {}, &asked),
            "             JOBID ST      STATE\n"
            "                77 CG COMPLETING\n"
            "                78 CD  COMPLETED\n"
            "                79  R    RUNNING\n");
}

// squeue -s: %i is the step id ("77.batch"); %A is the step's tasks.
TEST(SlurmTextTest, StepFormatsMarkTheStepIdAlone) {
  const std::string marked = MarkSqueueFormat("%.15i|%A", true);
  EXPECT_NE(marked.find("|%A"), std::string::npos);
  // As squeue prints it: the marked field, then the tasks.
  EXPECT_EQ(UnmarkSqueueOutput(std::string("\x1f.15\x1d") + "77.batch\x1e|1\n", kBeta),
            "805306445.batch|1\n");
  EXPECT_EQ(SqueueDefaultFormat(false, true), "%.15i %.8j %.9P %.8u %.9M %N");
}

// squeue -O: the ids printed whole, then fitted to their fields; the other
// fields as squeue printed them (a field without a size given its default).
TEST(SlurmTextTest, SqueueFieldFormatsKeepEachFieldsSizeAndSuffix) {
  const MarkedSqueueFields m = MarkSqueueFields("JobID:.12 ,State,name:8,arrayjobid");
  EXPECT_EQ(m.format, "JobID:0\x1e ,State:20\x1e,name:8\x1e,arrayjobid:0\x1e");
  ASSERT_EQ(m.fields.size(), 4u);
  EXPECT_TRUE(m.fields[0].id);
  EXPECT_TRUE(m.fields[0].right);
  EXPECT_EQ(m.fields[0].width, 12);
  EXPECT_EQ(m.fields[0].suffix, " ");
  EXPECT_FALSE(m.fields[1].id);
  EXPECT_TRUE(m.fields[3].id);
  EXPECT_EQ(m.fields[3].width, kSqueueFieldWidth);
  const std::string e = "\x1e";  // the marker
  const std::string printed = "JOBID" + e + " STATE               " + e + "NAME    " + e +
                              "ARRAY_JOB_ID" + e + "\n" + "77" + e + " PENDING             " + e +
                              "wrap    " + e + "77" + e + "\n" + "78" + e +
                              " RUNNING             " + e + "other   " + e + "78" + e + "\n";
  EXPECT_EQ(UnmarkSqueueFields(printed, m, kBeta),
            "       JOBID STATE               NAME    ARRAY_JOB_ID        \n"
            "   805306445 PENDING             wrap    805306445           \n"
            "          78 RUNNING             other   78                  \n");
  // "Field:" and "Field:0": whole, as squeue prints them.
  const MarkedSqueueFields whole = MarkSqueueFields("JobID:,State:0");
  EXPECT_EQ(whole.fields[0].width, 0);
  EXPECT_EQ(UnmarkSqueueFields("JOBID" + e + "STATE" + e + "\n77" + e + "PENDING" + e + "\n", whole,
                               kBeta),
            "JOBIDSTATE\n805306445PENDING\n");
  // A size no int holds is read as none.
  EXPECT_EQ(MarkSqueueFields("JobID:99999999999999").fields[0].width, 0);
}

TEST(SlurmTextTest, SqueueDefaultFormatsAre2205s) {
  EXPECT_EQ(SqueueDefaultFormat(false), "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R");
  EXPECT_EQ(SqueueDefaultFormat(true), "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R");
}

TEST(SlurmTextTest, SacctParsableColumnsByTheirHeader) {
  EXPECT_EQ(MapSacctOutput("JobIDRaw|State|JobName\n77|COMPLETED|77\n77.batch|COMPLETED|batch\n",
                           true, kBeta),
            "JobIDRaw|State|JobName\n805306445|COMPLETED|77\n805306445.batch|COMPLETED|batch\n");
  // -p: a bar after the last field too.
  EXPECT_EQ(MapSacctOutput("JobID|State|\n77|RUNNING|\n", true, kBeta),
            "JobID|State|\n805306445|RUNNING|\n");
}

TEST(SlurmTextTest, SacctFixedColumnsByTheLineOfDashes) {
  const std::string out =
      "JobID           JobName      State ExitCode \n"
      "------------ ---------- ---------- -------- \n"
      "77                 wrap  COMPLETED      0:0 \n"
      "77.batch          batch  COMPLETED      0:0 \n"
      "78                 wrap    RUNNING      0:0 \n";
  EXPECT_EQ(MapSacctOutput(out, false, kBeta),
            "JobID           JobName      State ExitCode \n"
            "------------ ---------- ---------- -------- \n"
            "805306445          wrap  COMPLETED      0:0 \n"
            "805306445.b+      batch  COMPLETED      0:0 \n"
            "78                 wrap    RUNNING      0:0 \n");
}

TEST(SlurmTextTest, ScontrolRecordsAndTheirArrays) {
  EXPECT_EQ(
      MapScontrolOutput("JobId=77 JobName=wrap\n   ArrayJobId=77 ArrayTaskId=3 Id=77\n", kBeta),
      "JobId=805306445 JobName=wrap\n   ArrayJobId=805306445 ArrayTaskId=3 Id=77\n");
  EXPECT_EQ(MapScontrolOutput("JobId=777 JobName=x\n", kBeta), "JobId=777 JobName=x\n");
}

// A routed job skyslurmd has not yet seen end (its folder may still be on
// its way back) is still finishing, whatever its cluster says of it.
TEST(SlurmTextTest, AnUnsettledJobsEndedStateIsHeldAsCompleting) {
  const Unsettled held = {"77"};
  // Its own line only: its steps ended, and 78 is settled.
  EXPECT_EQ(MapSacctOutput("JobIDRaw|State\n77|COMPLETED\n77.batch|COMPLETED\n78|FAILED\n", true,
                           {{"77", 805306445}, {"78", 805306446}}, held),
            "JobIDRaw|State\n805306445|COMPLETING\n805306445.batch|COMPLETED\n805306446|FAILED\n");
  // A state not yet ended is shown as it is; "CANCELLED by 0" is ended.
  EXPECT_EQ(MapSacctOutput("State|JobID\nRUNNING|77\nCANCELLED by 0|77\n", true, kBeta, held),
            "State|JobID\nRUNNING|805306445\nCOMPLETING|805306445\n");
  // Without a JobID column nothing tells whose a line is: held when every
  // job named there is unsettled (sacct -j <id> -o State), else as it is.
  EXPECT_EQ(MapSacctOutput("State\nCOMPLETED\nCOMPLETED\n", true, kBeta, held, true),
            "State\nCOMPLETING\nCOMPLETING\n");
  EXPECT_EQ(MapSacctOutput("State\nCOMPLETED\n", true, kBeta, held), "State\nCOMPLETED\n");
  EXPECT_EQ(MapSacctOutput("     State \n---------- \n    FAILED \n", false, kBeta, held, true),
            "     State \n---------- \nCOMPLETING \n");
  const std::string table =
      "JobID           JobName      State ExitCode \n"
      "------------ ---------- ---------- -------- \n"
      "77                 wrap     FAILED      1:0 \n"
      "77.batch          batch     FAILED      1:0 \n";
  EXPECT_EQ(MapSacctOutput(table, false, kBeta, held),
            "JobID           JobName      State ExitCode \n"
            "------------ ---------- ---------- -------- \n"
            "805306445          wrap COMPLETING      1:0 \n"
            "805306445.b+      batch     FAILED      1:0 \n");
  // A narrower column cuts it as sacct cuts.
  EXPECT_EQ(MapSacctOutput("JobID State \n----- ----- \n77    TIME+ \n", false, {}, held),
            "JobID State \n----- ----- \n77    COMP+ \n");
  // scontrol: the record of the job, not the next one's.
  EXPECT_EQ(MapScontrolOutput("JobId=77 JobName=wrap\n   JobState=COMPLETED Reason=None\n\n"
                              "JobId=78 JobName=x\n   JobState=COMPLETED Reason=None\n",
                              kBeta, held),
            "JobId=805306445 JobName=wrap\n   JobState=COMPLETING Reason=None\n\n"
            "JobId=78 JobName=x\n   JobState=COMPLETED Reason=None\n");
  EXPECT_EQ(MapScontrolOutput("JobId=77 JobName=wrap JobState=RUNNING Reason=None\n", kBeta, held),
            "JobId=805306445 JobName=wrap JobState=RUNNING Reason=None\n");
}

TEST(SlurmTextTest, EndedStatesAreSacctsAndScontrolsWords) {
  for (const char* ended :
       {"COMPLETED", "FAILED", "CANCELLED", "CANCELLED by 1000", "TIMEOUT", "NODE_FAIL",
        "OUT_OF_MEMORY", "OUT_OF_ME+", "BOOT_FAIL", "DEADLINE", "PREEMPTED", "  COMPLETED "}) {
    EXPECT_TRUE(IsEndedSlurmState(ended)) << ended;
  }
  for (const char* live : {"PENDING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED", "RESIZING",
                           "", "+", "COMPLETEDX"}) {
    EXPECT_FALSE(IsEndedSlurmState(live)) << live;
  }
}

// squeue -M alpha,beta: each section's ids mapped with its cluster's jobs,
// the same number in another cluster's section left alone.
TEST(SlurmTextTest, ClusterSectionsAreMappedEachWithItsClustersJobs) {
  const std::map<std::string, IdMap, std::less<>> maps = {{"beta", kBeta},
                                                          {"alpha", {{"5", 1811939333}}}};
  auto mapped = [](std::string_view text, const IdMap& map) {
    std::string out;
    for (const std::string_view id : {"77", "5"}) {
      if (text.find(id) != std::string_view::npos) out += MapIdValue(id, map) + " ";
    }
    return out.empty() ? std::string(text) : out + "|";
  };
  EXPECT_EQ(MapClusterSections("CLUSTER: alpha\nJOBID\n5\n77\n\nCLUSTER: beta\nJOBID\n77\n5\n\n"
                               "CLUSTER: gamma\n77\n",
                               maps, mapped),
            "CLUSTER: alpha\n77 1811939333 |CLUSTER: beta\n805306445 5 |CLUSTER: gamma\n77 |");
  EXPECT_EQ(MapClusterSections("squeue: error: no such cluster\n", maps, mapped),
            "squeue: error: no such cluster\n");
  // -l: its date line first, as it is.
  EXPECT_EQ(
      MapClusterSections("Sun Dec 06 19:04:06 2026\nCLUSTER: beta\nJOBID\n77\n", maps, mapped),
      "Sun Dec 06 19:04:06 2026\nCLUSTER: beta\n805306445 |");
}

// squeue -M alpha,beta -h, as 22.05 prints it on the testbed: its own
// layout names each line's cluster, a format given does not.
TEST(SlurmTextTest, SectionsAsSqueueMinusHPrintsThem) {
  const std::string sections =
      "CLUSTER: alpha\n             JOBID PARTITION\n              3664       gpu\n\n"
      "CLUSTER: beta\n             JOBID PARTITION\n              1940 h100-clus\n\n"
      "CLUSTER: gamma\n             JOBID PARTITION\n";
  EXPECT_EQ(SectionsWithoutHeaders(sections, true),
            "alpha                    3664       gpu\n"
            "beta                     1940 h100-clus\n");
  EXPECT_EQ(SectionsWithoutHeaders(sections, false),
            "              3664       gpu\n              1940 h100-clus\n");
  // One cluster: no names.
  EXPECT_EQ(SectionsWithoutHeaders("CLUSTER: beta\nJOBID\n1940\n", true), "1940\n");
}

// squeue -M alpha,beta -h prints no sections: each line begins with its
// cluster's name (found on the testbed), and is mapped with that cluster's jobs.
TEST(SlurmTextTest, WithoutHeadersEachLineIsMappedByTheClusterItNames) {
  const std::map<std::string, IdMap, std::less<>> maps = {{"beta", kBeta}};
  auto mapped = [](std::string_view text, const IdMap& map) {
    std::string line(text);
    const std::size_t at = line.find("77");
    if (at != std::string::npos) line.replace(at, 2, MapIdValue("77", map));
    return line;
  };
  EXPECT_EQ(MapClusterSections("alpha                      77 wrap\n"
                               "beta                       77 wrap\n"
                               "gamma                      77 wrap\n",
                               maps, mapped),
            "alpha                      77 wrap\n"
            "beta                       805306445 wrap\n"
            "gamma                      77 wrap\n");
}

// sacct -M all: one table; each line mapped by its Cluster field (asked
// for at the end, then removed), the same number on two clusters apart.
TEST(SlurmTextTest, SacctOverClustersMapsEachLineByItsCluster) {
  const std::map<std::string, IdMap, std::less<>> maps = {{"beta", kBeta}};
  const std::map<std::string, Unsettled, std::less<>> unsettled = {{"beta", {"77"}}};
  EXPECT_EQ(MapSacctByCluster("JobID|State|Cluster|\n77|COMPLETED|beta|\n77|FAILED|alpha|\n"
                              "77.batch|COMPLETED|beta|\n",
                              true, maps, unsettled),
            "JobID|State|\n805306445|COMPLETING|\n77|FAILED|\n805306445.batch|COMPLETED|\n");
  EXPECT_EQ(MapSacctByCluster("JobID|State|Cluster\n77|RUNNING|beta\n", true, maps, {}),
            "JobID|State\n805306445|RUNNING\n");
  // Fixed columns: JobID 12 wide, State 10 (right-justified), Cluster 40.
  auto cluster = [](const std::string& name) {
    return std::string(kSacctClusterWidth - name.size(), ' ') + name + " ";
  };
  EXPECT_EQ(
      MapSacctByCluster("JobID             State " + cluster("Cluster") + "\n" +
                            "------------ ---------- " + std::string(kSacctClusterWidth, '-') +
                            " \n" + "77               FAILED " + cluster("beta") + "\n",
                        false, maps, {}),
      "JobID             State \n------------ ---------- \n805306445        FAILED \n");
}

TEST(SlurmTextTest, DropLinesDropsHeaders) {
  EXPECT_EQ(DropLines("a\nb\nc\n", 2), "c\n");
  EXPECT_EQ(DropLines("a\n", 2), "");
  EXPECT_EQ(DropLines("a", 1), "");
}

}  // namespace
}  // namespace skyslurm::daemon
