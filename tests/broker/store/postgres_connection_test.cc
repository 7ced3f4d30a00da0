// What the PostgreSQL connection does without a server: its placeholders
// and how it names a database in messages (never with its password).
#include "broker/store/postgres_connection.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm::store {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(NumberPlaceholdersTest, NumbersEachQuestionMarkOutsideQuotes) {
  EXPECT_EQ(NumberPlaceholders("UPDATE jobs SET a=?, b=? WHERE c=? AND d='?' AND \"e?\"=?"),
            "UPDATE jobs SET a=$1, b=$2 WHERE c=$3 AND d='?' AND \"e?\"=$4");
  EXPECT_EQ(NumberPlaceholders("SELECT 'it''s ?' , ?"), "SELECT 'it''s ?' , $1");
  EXPECT_EQ(NumberPlaceholders("SELECT 1"), "SELECT 1");
}

TEST(PostgresWhereTest, NamesServerAndDatabaseNeverTheCredentials) {
  EXPECT_EQ(*PostgresWhere("postgresql://skyslurm@127.0.0.1:7508/site?passfile=/x/pgpass"),
            "127.0.0.1:7508/site");
  // A password holding '/' and '@' (percent-encoded as the URL wants it).
  auto where = PostgresWhere("postgresql://site:pa%2Fss%40wo@db.example.org/skyslurm");
  ASSERT_TRUE(where.ok()) << where.status().message();
  EXPECT_EQ(*where, "db.example.org/skyslurm");
  EXPECT_THAT(*where, Not(HasSubstr("pa")));
  // A password with a '/' left unencoded reads as host:port/database: refused.
  auto raw = PostgresWhere("postgresql://site:ab/cd@db.example.org:7508/skyslurm");
  ASSERT_FALSE(raw.ok());
  EXPECT_THAT(raw.status().message(), HasSubstr("%2F"));
  EXPECT_THAT(raw.status().message(), Not(HasSubstr("cd@")));
  // Malformed (an unclosed IPv6 address): refused without quoting any of it.
  auto bad = PostgresWhere("postgresql://site:s3cret@[::1/skyslurm");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), Not(HasSubstr("s3cret")));
}

}  // namespace
}  // namespace skyslurm::store
