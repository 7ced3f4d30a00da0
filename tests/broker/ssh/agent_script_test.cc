// The agent's loop, run by a real bash on this machine (the SSH side is
// SessionPoolTest's, on the testbed's login nodes): framing, exit statuses,
// separate streams, stdin, folders and environment per request.
#include "broker/ssh/agent_script.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace skyslurm::ssh {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// bash -c AgentScript(), spoken to through pipes as sshd would.
class LocalAgent {
 public:
  LocalAgent() {
    int in[2], out[2];
    EXPECT_EQ(pipe(in), 0);
    EXPECT_EQ(pipe(out), 0);
    pid_ = fork();
    if (pid_ == 0) {
      dup2(in[0], 0);
      dup2(out[1], 1);
      close(in[1]);
      close(out[0]);
      const std::string script = AgentScript();
      execl("/bin/bash", "bash", "-c", script.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    to_ = in[1];
    from_ = out[0];
  }
  ~LocalAgent() {
    close(to_);
    close(from_);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  std::string Read(std::size_t n) {
    while (buffer_.size() < n) {
      char buf[4096];
      const ssize_t got = read(from_, buf, sizeof buf);
      if (got <= 0) break;
      buffer_.append(buf, static_cast<std::size_t>(got));
    }
    std::string head = buffer_.substr(0, n);
    buffer_.erase(0, n);
    return head;
  }
  std::string ReadLine() {
    std::string line;
    while (true) {
      const std::string c = Read(1);
      if (c.empty() || c == "\n") return line;
      line += c;
    }
  }
  CommandOutput Run(std::uint64_t id, const Command& c) {
    const std::string request = AgentRequest(id, AgentCommandLine(c), c.stdin_data.value_or(""));
    EXPECT_EQ(write(to_, request.data(), request.size()), static_cast<ssize_t>(request.size()));
    auto header = ParseAgentAnswerHeader(ReadLine());
    EXPECT_TRUE(header.ok()) << header.status().message();
    CommandOutput out;
    if (!header.ok()) return out;
    EXPECT_EQ(header->id, id);
    out.exit_code = header->status;
    out.out = Read(header->out_bytes);
    out.err = Read(header->err_bytes);
    return out;
  }

 private:
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  std::string buffer_;
};

TEST(AgentScriptTest, AnswersEachRequestInTurnWithItsStatusAndBothStreams) {
  LocalAgent agent;
  EXPECT_EQ(agent.Read(kAgentReady.size()), kAgentReady);
  auto a = agent.Run(1, {.argv = {"sh", "-c", "printf 'out\\n\\n'; printf err >&2; exit 3"}});
  EXPECT_EQ(a.exit_code, 3);
  EXPECT_EQ(a.out, "out\n\n");  // trailing newlines kept
  EXPECT_EQ(a.err, "err");
  auto b = agent.Run(2, {.argv = {"echo", "it's", "a $HOME `x`"}});
  EXPECT_EQ(b.exit_code, 0);
  EXPECT_EQ(b.out, "it's a $HOME `x`\n");
  auto killed = agent.Run(3, {.argv = {"sh", "-c", "kill -9 $$"}});
  EXPECT_EQ(killed.exit_code, 128 + 9);
}

TEST(AgentScriptTest, EachRequestHasItsOwnInputFolderAndEnvironment) {
  LocalAgent agent;
  agent.Read(kAgentReady.size());
  const std::string script = "#!/bin/sh\n# a script\n\n'quoted' \"and\" $VAR \\ back\n\n";
  auto cat = agent.Run(1, {.argv = {"cat"}, .stdin_data = script});
  EXPECT_EQ(cat.out, script);  // byte for byte, trailing newlines too
  setenv("SKY_AGENT_TEST_GONE", "here", 1);
  auto env =
      agent.Run(2, {.argv = {"sh", "-c", "pwd; echo \"$A|${SKY_AGENT_TEST_GONE-unset}|$LC_ALL\""},
                    .env_set = {{"A", "one 'two'"}},
                    .env_unset = {"SKY_AGENT_TEST_GONE"},
                    .cwd = "/usr"});
  EXPECT_EQ(env.out, "/usr\none 'two'|unset|\n");
  // Nothing of one request stays for the next.
  auto after = agent.Run(3, {.argv = {"sh", "-c", "pwd; echo \"${A-unset}\""}});
  EXPECT_THAT(after.out, ::testing::Not(HasSubstr("/usr\n")));
  EXPECT_THAT(after.out, HasSubstr("unset"));
  auto nodir = agent.Run(4, {.argv = {"true"}, .cwd = "/nonexistent-skyslurm"});
  EXPECT_NE(nodir.exit_code, 0);
  EXPECT_THAT(nodir.err, HasSubstr("nonexistent-skyslurm"));
}

// A value never goes to `env` as an argument (every user of a login node
// reads a process's arguments): a name no shell assigns is left out, and
// bash's exported functions are defined and exported again.
TEST(AgentScriptTest, ValuesAreNeverArgumentsAndExportedFunctionsArrive) {
  LocalAgent agent;
  agent.Read(kAgentReady.size());
  Command c{.argv = {"bash", "-c", "greet; env"},
            .env_set = {{"weird.name", "v"},
                        {"BASH_FUNC_greet%%", "() {  echo \"hello $USER_WORD\"\n}"},
                        {"USER_WORD", "there"}}};
  const std::string line = AgentCommandLine(c);
  EXPECT_THAT(line, Not(HasSubstr("env ")));
  EXPECT_THAT(line, Not(HasSubstr("weird.name")));
  CommandOutput out = agent.Run(1, c);
  EXPECT_THAT(out.out, ::testing::StartsWith("hello there\n")) << out.err;
  EXPECT_THAT(out.out, Not(HasSubstr("weird.name")));
}

TEST(AgentScriptTest, HeadersAreStrict) {
  auto h = ParseAgentAnswerHeader("skyslurm-agent 7 0 12 3");
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->id, 7u);
  EXPECT_EQ(h->out_bytes, 12u);
  EXPECT_EQ(h->err_bytes, 3u);
  EXPECT_THAT(ParseAgentAnswerHeader("bash: line 1: oops").status().message(),
              HasSubstr("the agent answered 'bash: line 1: oops'"));
  EXPECT_FALSE(ParseAgentAnswerHeader("skyslurm-agent 7 0 12").ok());
  EXPECT_FALSE(ParseAgentAnswerHeader("skyslurm-agent 7 0 12 3 9").ok());
  EXPECT_EQ(AgentRequest(5, "ls", "in"), "skyslurm-agent 5 2 2\nlsin");
  // Sizes a broken login node could claim: refused, never waited for (their
  // sum would wrap around; each alone would be allocated).
  EXPECT_THAT(
      ParseAgentAnswerHeader("skyslurm-agent 7 0 18446744073709551615 2").status().message(),
      HasSubstr("over the"));
  EXPECT_FALSE(ParseAgentAnswerHeader("skyslurm-agent 7 0 2 18446744073709551615").ok());
  EXPECT_FALSE(ParseAgentAnswerHeader("skyslurm-agent 7 0 99999999999999999999999 2").ok());
}

}  // namespace
}  // namespace skyslurm::ssh
