// The command that reproduces a run, as one line a POSIX shell reads back
// into the same argv: the model report's "command" and a batch job's.
#pragma once
#include <string>
#include <vector>

namespace refinery::report {

// Each argument as is when it is made of safe characters, else in single
// quotes ('it'\''s').
std::string shell_command(const std::vector<std::string>& argv);

}  // namespace refinery::report
