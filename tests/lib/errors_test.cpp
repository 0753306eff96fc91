// error_from_reply: the one place that reads the code word of a server's
// error, and the key a reply names after it.
#include "echomq/errors.h"

#include <gtest/gtest.h>

namespace echomq {
namespace {

TEST(ErrorFromReply, ReadsTheCodeWordOnceAndTheKeyAClaimRefusalNames) {
  const Error limit = error_from_reply("claim", "EMQARG emq:{q}:meta max_active must be an integer in 1..1000000");
  EXPECT_EQ(limit.kind(), ErrorKind::Arg);
  EXPECT_EQ(limit.code(), ReplyCode::EmqArg);
  EXPECT_EQ(limit.key(), "emq:{q}:meta");
  EXPECT_EQ(limit.detail(), "emq:{q}:meta max_active must be an integer in 1..1000000");
  EXPECT_EQ(std::string(limit.what()), "claim: EMQARG emq:{q}:meta max_active must be an integer in 1..1000000");

  const Error argument = error_from_reply("claim", "EMQARG lease_ms must be an integer in 1..1000000000000");
  EXPECT_EQ(argument.code(), ReplyCode::EmqArg);
  EXPECT_EQ(argument.key(), "") << "an argument's name is no key";

  const Error wrong = error_from_reply("claim", "WRONGTYPE Operation against a key holding the wrong kind of value");
  EXPECT_EQ(wrong.kind(), ErrorKind::Reply);
  EXPECT_EQ(wrong.code(), ReplyCode::WrongType);
  EXPECT_EQ(wrong.key(), "");

  EXPECT_EQ(error_from_reply("x", "EMQKIND job id must be JOB-namespaced").code(), ReplyCode::EmqKind);
  EXPECT_EQ(error_from_reply("x", "EMQWIRE {emq}:version holds 'emq/2'").code(), ReplyCode::EmqWire);
  const Error readonly = error_from_reply("x", "READONLY You can't write against a read only replica.");
  EXPECT_EQ(readonly.kind(), ErrorKind::ReadOnly);
  EXPECT_EQ(readonly.code(), ReplyCode::Other);
  EXPECT_EQ(error_from_reply("x", "ERR").code(), ReplyCode::Other);
  EXPECT_EQ(Error(ErrorKind::Io, "connect", "refused").code(), ReplyCode::None);
}

}  // namespace
}  // namespace echomq
