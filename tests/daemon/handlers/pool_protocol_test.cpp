// The pool handler's NDJSON frames: the job line exactly as DESIGN.md
// gives it (text payloads as "payload", anything else as "payload_b64"),
// and every way a reply line can be right or wrong.
#include "handlers/pool_protocol.h"
#include "handler_test_support.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

namespace echomq::daemon {
namespace {

using test_support::every_byte;
using ::testing::HasSubstr;

Job frame_job(std::string payload) {
  Job j;
  j.queue = "thumbs";
  j.id = "JOB_01HZX3T5N9W8Q2M4K7R6P0ABCD";
  j.attempt = 2;
  j.deadline_ms = 1700000000123;
  j.payload = std::move(payload);
  return j;
}

TEST(PoolFrame, TextPayloadIsOneLineWithTheKeysInOrder) {
  EXPECT_EQ(encode_job_frame(frame_job("make it \"small\"\nplease, é")),
            "{\"id\":\"JOB_01HZX3T5N9W8Q2M4K7R6P0ABCD\",\"queue\":\"thumbs\",\"attempt\":2,"
            "\"deadline_ms\":1700000000123,\"payload\":\"make it \\\"small\\\"\\nplease, é\"}\n");
}

TEST(PoolFrame, ATracedJobsLineCarriesItsContextAfterTheDeadline) {
  Job j = frame_job("x");
  j.traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  j.tracestate = "vendor=opaque";
  EXPECT_EQ(encode_job_frame(j),
            "{\"id\":\"JOB_01HZX3T5N9W8Q2M4K7R6P0ABCD\",\"queue\":\"thumbs\",\"attempt\":2,"
            "\"deadline_ms\":1700000000123,\"traceparent\":\"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\","
            "\"tracestate\":\"vendor=opaque\",\"payload\":\"x\"}\n");
  j.tracestate.clear();
  EXPECT_EQ(encode_job_frame(j).find("tracestate"), std::string::npos);
}

TEST(PoolFrame, AParentsLineCarriesItsChildrenBeforeThePayload) {
  Job j = frame_job("sheet");
  j.children = {{"thumbs", "JOB_a", ChildOutcome::Completed, "a.png"},
                {"thumbs", "JOB_b", ChildOutcome::Dead, std::string("\xff", 1)}};
  EXPECT_EQ(encode_job_frame(j),
            "{\"id\":\"JOB_01HZX3T5N9W8Q2M4K7R6P0ABCD\",\"queue\":\"thumbs\",\"attempt\":2,"
            "\"deadline_ms\":1700000000123,\"children\":[{\"queue\":\"thumbs\",\"id\":\"JOB_a\",\"outcome\":"
            "\"completed\",\"result\":\"a.png\"},{\"queue\":\"thumbs\",\"id\":\"JOB_b\",\"outcome\":\"dead\","
            "\"error_b64\":\"/w==\"}],\"payload\":\"sheet\"}\n");
}

TEST(PoolFrame, ControlCharactersAndNulStayInsideTheOneLine) {
  const std::string payload = std::string("a\0b\r\n\t\x1f", 7);
  const std::string frame = encode_job_frame(frame_job(payload));
  EXPECT_EQ(frame.find('\n'), frame.size() - 1);
  const auto parsed = nlohmann::json::parse(frame);
  EXPECT_EQ(parsed.at("payload").get<std::string>(), payload);
  EXPECT_FALSE(parsed.contains("payload_b64"));
}

TEST(PoolFrame, BytesThatAreNotUtf8TravelAsBase64) {
  const std::string frame = encode_job_frame(frame_job(every_byte()));
  EXPECT_EQ(frame.find('\n'), frame.size() - 1);
  const auto parsed = nlohmann::json::parse(frame);
  EXPECT_FALSE(parsed.contains("payload"));
  std::string decoded;
  ASSERT_TRUE(base64_decode(parsed.at("payload_b64").get<std::string>(), decoded));
  EXPECT_EQ(decoded, every_byte());
  EXPECT_THAT(frame, HasSubstr(",\"deadline_ms\":1700000000123,\"payload_b64\":\"AAECAwQF"));
}

TEST(PoolFrame, EmptyPayloadIsAnEmptyString) {
  EXPECT_THAT(encode_job_frame(frame_job("")), HasSubstr(",\"payload\":\"\"}\n"));
}

TEST(PoolReply, SuccessWithTextResult) {
  Reply r;
  ASSERT_EQ(parse_reply_frame(R"({"id":"JOB_1","ok":true,"result":"done é"})", r), "");
  EXPECT_EQ(r.id, "JOB_1");
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.result, "done é");
}

TEST(PoolReply, SuccessWithBinaryResultOrNone) {
  Reply r;
  ASSERT_EQ(parse_reply_frame(R"({"id":"JOB_1","ok":true,"result_b64":")" + base64_encode(every_byte()) + "\"}", r),
            "");
  EXPECT_EQ(r.result, every_byte());
  ASSERT_EQ(parse_reply_frame(R"({"ok":true,"id":"JOB_2","extra":[1,2]})", r), "");
  EXPECT_EQ(r.id, "JOB_2");
  EXPECT_EQ(r.result, "");
}

TEST(PoolReply, FailureRetryOrPermanent) {
  Reply r;
  ASSERT_EQ(parse_reply_frame(R"({"id":"JOB_1","ok":false,"error":"no such image","permanent":true})", r), "");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "no such image");
  EXPECT_TRUE(r.permanent);
  ASSERT_EQ(parse_reply_frame(R"({"id":"JOB_1","ok":false,"error":"busy"})", r), "");
  EXPECT_FALSE(r.permanent);
}

TEST(PoolReply, AProgressLineIsNotTheAnswerAndKeepsItsValueAsText) {
  Reply r;
  ASSERT_EQ(parse_reply_frame(R"({"id":"JOB_1","progress":"40%"})", r), "");
  EXPECT_TRUE(r.is_progress);
  EXPECT_EQ(r.id, "JOB_1");
  EXPECT_EQ(r.progress, "40%");
  ASSERT_EQ(parse_reply_frame(R"({"id":"JOB_1","progress":{"done":3,"of":10}})", r), "");
  EXPECT_EQ(r.progress, R"({"done":3,"of":10})");
  ASSERT_EQ(parse_reply_frame(R"({"id":"JOB_1","ok":true,"progress":"late"})", r), "");
  EXPECT_FALSE(r.is_progress) << "with ok it is the answer";
}

TEST(PoolReply, EveryMalformedLineSaysWhat) {
  Reply r;
  EXPECT_THAT(parse_reply_frame("this is not json", r), HasSubstr("the reply line is not JSON"));
  EXPECT_THAT(parse_reply_frame("this is not json", r), HasSubstr("\"this is not json\""));
  EXPECT_THAT(parse_reply_frame("", r), HasSubstr("not JSON"));
  EXPECT_THAT(parse_reply_frame("[1,2]", r), HasSubstr("the reply is a JSON array, not an object"));
  EXPECT_THAT(parse_reply_frame(R"({"ok":true})", r), HasSubstr("no \"id\" string"));
  EXPECT_THAT(parse_reply_frame(R"({"id":7,"ok":true})", r), HasSubstr("no \"id\" string"));
  EXPECT_THAT(parse_reply_frame(R"({"id":"J","ok":"yes"})", r), HasSubstr("no \"ok\" true or false"));
  EXPECT_THAT(parse_reply_frame(R"({"id":"J","ok":true,"result":5})", r),
              HasSubstr("\"result\" is a number, expected a string"));
  EXPECT_THAT(parse_reply_frame(R"({"id":"J","ok":true,"result":"a","result_b64":"YQ=="})", r),
              HasSubstr("both \"result\" and \"result_b64\""));
  EXPECT_THAT(parse_reply_frame(R"({"id":"J","ok":true,"result_b64":"not base64!"})", r),
              HasSubstr("\"result_b64\" is not a base64 string"));
  EXPECT_THAT(parse_reply_frame(R"({"id":"J","ok":false,"permanent":"no"})", r),
              HasSubstr("\"permanent\" is a string, expected true or false"));
  EXPECT_THAT(parse_reply_frame("{\"id\":\"J\",\"ok\":true,\"result\":\"\xff\"}", r), HasSubstr("not JSON"));
  EXPECT_THAT(parse_reply_frame(R"({"id":"J","ok":true} trailing)", r), HasSubstr("not JSON"));
}

TEST(PoolReply, AQuotedBadLineIsCutAndSafe) {
  Reply r;
  const std::string problem = parse_reply_frame(std::string(10000, '\xff'), r);
  EXPECT_LT(problem.size(), 600u);
  EXPECT_TRUE(is_utf8(problem));
}

}  // namespace
}  // namespace echomq::daemon
