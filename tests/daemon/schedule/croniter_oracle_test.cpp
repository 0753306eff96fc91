// TickRule::next_after against an independent oracle, Debian's
// python3-croniter (croniter_oracle.py), over random (expression, instant,
// zone) cases: a fixed seed, so a failure repeats. Half the instants are
// drawn within two days of one of the zone's offset changes.
//
// They must agree on every case. croniter_oracle.py says what the oracle
// is made of and why croniter's own time-zone mode is not it.
#include <date/tz.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "schedule/next_tick.h"

namespace echomq::daemon {
namespace {

constexpr int kCases = 12000;

const std::vector<std::string> kZones = {
    "UTC",           "Europe/Berlin",   "America/New_York", "Australia/Lord_Howe", "Europe/London",
    "Asia/Kolkata",  "Pacific/Chatham", "America/Santiago", "Asia/Kathmandu",      "America/Sao_Paulo",
    "Europe/Dublin", "Pacific/Apia",    "America/St_Johns"};

struct Case {
  std::string expression;
  std::string zone;
  std::int64_t after_ms;
};

class Draw {
 public:
  explicit Draw(unsigned seed) : rng_(seed) {}

  int between(int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng_); }

  std::string field(int low, int high, const char* const* names) {
    auto value = [&](int v) {
      if (names != nullptr && between(0, 3) == 0) return std::string(names[v - low]);
      return std::to_string(v);
    };
    auto item = [&]() -> std::string {
      switch (between(0, 5)) {
        case 0: return "*";
        case 1: return value(between(low, high));
        case 2: {
          int a = between(low, high);
          return value(a) + "-" + value(between(a, high));
        }
        case 3: return "*/" + std::to_string(between(1, std::max(2, (high - low) / 2)));
        case 4: {
          int a = between(low, high);
          return value(a) + "-" + value(between(a, high)) + "/" + std::to_string(between(1, 5));
        }
        default: return std::to_string(between(low, high)) + "/" + std::to_string(between(1, 10));
      }
    };
    std::string out = item();
    if (out != "*")
      for (int n = between(0, 2); n > 0; --n) {
        std::string more = item();
        if (more != "*") out += "," + more;
      }
    return out;
  }

  std::string expression() {
    static const char* const kMonths[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                          "jul", "aug", "sep", "oct", "nov", "dec"};
    static const char* const kDays[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};
    // The busy fields are mostly coarse, the day fields mostly open, so the
    // ticks spread from minutes to years.
    std::string minute = between(0, 2) == 0 ? field(0, 59, nullptr) : std::to_string(between(0, 59));
    std::string hour = between(0, 1) == 0 ? field(0, 23, nullptr) : std::to_string(between(0, 23));
    std::string dom = between(0, 2) == 0 ? field(1, 31, nullptr) : "*";
    std::string month = between(0, 3) == 0 ? field(1, 12, kMonths) : "*";
    std::string dow = between(0, 2) == 0 ? field(0, 6, kDays) : "*";
    return minute + " " + hour + " " + dom + " " + month + " " + dow;
  }

  std::int64_t instant(const date::time_zone* zone) {
    using namespace std::chrono;
    std::int64_t from = 946684800000;  // 2000-01-01
    std::int64_t to = 2051222400000;   // 2035-01-01
    std::int64_t at = std::uniform_int_distribution<std::int64_t>(from, to)(rng_);
    if (between(0, 1) == 0) {
      date::sys_info info = zone->get_info(date::sys_time<milliseconds>(milliseconds(at)));
      std::int64_t change = duration_cast<milliseconds>(info.end.time_since_epoch()).count();
      if (change < to) at = change + std::uniform_int_distribution<std::int64_t>(-172800000, 172800000)(rng_);
    }
    return at;
  }

 private:
  std::mt19937_64 rng_;
};

TEST(CroniterOracle, AgreesOnTenThousandRandomCases) {
  Draw draw(20261205);
  std::vector<Case> cases;
  while (static_cast<int>(cases.size()) < kCases) {
    Case c{draw.expression(), kZones[static_cast<std::size_t>(draw.between(0, int(kZones.size()) - 1))], 0};
    try {
      parse_cron(c.expression);
    } catch (const CronError&) {
      continue;  // "0 0 31 2 *" and the like: refused at parse (cron_expression_test)
    }
    c.after_ms = draw.instant(find_zone(c.zone));
    cases.push_back(c);
  }

  std::string input = testing::TempDir() + "croniter_cases.tsv";
  std::string output = testing::TempDir() + "croniter_answers.txt";
  {
    std::ofstream in(input);
    for (const Case& c : cases) in << c.expression << '\t' << c.zone << '\t' << c.after_ms << '\n';
  }
  std::string command = std::string(EMQ_SYSTEM_PYTHON3) + " " + EMQ_SOURCE_DIR +
                        "/tests/daemon/schedule/croniter_oracle.py < " + input + " > " + output;
  ASSERT_EQ(std::system(command.c_str()), 0) << command << " (is python3-croniter installed? scripts/install-deps.sh)";

  std::ifstream answers(output);
  int agreed = 0;
  std::string line;
  for (const Case& c : cases) {
    ASSERT_TRUE(std::getline(answers, line)) << "the oracle answered fewer cases than asked";
    const date::time_zone* zone = find_zone(c.zone);
    std::optional<std::int64_t> ours = TickRule::cron(parse_cron(c.expression), zone).next_after(c.after_ms);
    ASSERT_TRUE(ours.has_value()) << c.expression << " in " << c.zone << " after " << c.after_ms;
    ASSERT_NE(line.rfind("error", 0), 0u) << c.expression << " in " << c.zone << ": " << line;
    std::int64_t theirs = std::stoll(line);
    ASSERT_EQ(*ours, theirs) << "'" << c.expression << "' in " << c.zone << " after " << c.after_ms;
    ++agreed;
  }
  std::printf("croniter oracle: %d of %zu cases agree\n", agreed, cases.size());
  EXPECT_GE(agreed, 10000);
}

}  // namespace
}  // namespace echomq::daemon
