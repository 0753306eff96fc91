// Jobs as emq prints them: the table of `emq jobs` and `emq search`, and
// one job's JSON object in their --json forms.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "echomq/jobs.h"

namespace echomq::cli {

// ID, the state's time (due, deadline, death), lane, attempts, failures,
// a payload preview and the error, on stdout.
void print_job_table(JobState state, const std::vector<JobSummary>& jobs);
nlohmann::ordered_json job_json(JobState state, const JobSummary& j);

// The --state option's value; Error{Invalid} naming `op` and the states.
JobState state_option(const std::string& name, const char* op);

}  // namespace echomq::cli
