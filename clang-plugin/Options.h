// Parsing of the plugin's options (-fplugin-arg-tile-NAME=VALUE; see API.md).
#pragma once

#include <string>
#include <vector>

#include "Pipeline/Pipeline.h"

namespace tile::plugin {

/// Fills `opts` from the plugin's arguments ("NAME=VALUE" or "NAME"); on a bad argument
/// returns false with `problem` saying what is wrong and what is accepted.
bool parse_options(const std::vector<std::string> &args, pipeline::Options &opts, std::string &problem);

} // namespace tile::plugin
