#include "broker/util/secret_seal.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

namespace skyslurm {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

TEST(SecretSealTest, ASealedSecretOpensWithItsKeyAlone) {
  auto seal = SecretSeal::FromKey(std::string(32, 'k'));
  ASSERT_TRUE(seal.ok());
  auto sealed = seal->Seal("hf_token_value");
  ASSERT_TRUE(sealed.ok());
  EXPECT_THAT(*sealed, StartsWith("skyslurm-sealed:v1:"));
  EXPECT_THAT(*sealed, Not(HasSubstr("hf_token_value")));
  EXPECT_NE(*sealed, *seal->Seal("hf_token_value"));  // a fresh nonce each time
  EXPECT_EQ(*seal->Open(*sealed), "hf_token_value");
  EXPECT_EQ(*seal->Open(*seal->Seal("")), "");
  // Another key, or a changed byte: it does not open.
  auto other = SecretSeal::FromKey(std::string(32, 'o'));
  EXPECT_FALSE(other->Open(*sealed).ok());
  std::string changed = *sealed;
  changed[changed.size() - 3] = changed[changed.size() - 3] == 'A' ? 'B' : 'A';
  EXPECT_FALSE(seal->Open(changed).ok());
  EXPECT_FALSE(seal->Open("skyslurm-sealed:v1:!!").ok());
  EXPECT_FALSE(SecretSeal::FromKey("short").ok());
}

TEST(SecretSealTest, TheKeyFileIsMadeOnceAndOnlyItsUserReadsIt) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("secret-seal-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "secret.key").string();
  auto first = SecretSeal::FromKeyFile(file);
  ASSERT_TRUE(first.ok()) << first.status().message();
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_size, 32);
  auto again = SecretSeal::FromKeyFile(file);  // the same key, read back
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again->Open(*first->Seal("x")), "x");
  // A key others can read seals nothing: refused, saying how to mend it.
  ::chmod(file.c_str(), 0644);
  auto open_to_all = SecretSeal::FromKeyFile(file);
  ASSERT_FALSE(open_to_all.ok());
  EXPECT_THAT(open_to_all.status().message(), HasSubstr("mode 0644): chmod 600"));
  ::chmod(file.c_str(), 0600);
  std::ofstream(file, std::ios::trunc) << "short";
  auto broken = SecretSeal::FromKeyFile(file);
  ASSERT_FALSE(broken.ok());
  EXPECT_THAT(broken.status().message(), HasSubstr("is not a sealing key"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace skyslurm
