// The files of `emq web`'s page (emq/web/assets/), compiled into emq by
// cmake/embed_web_assets.cmake: the page loads nothing from elsewhere.
#pragma once

#include <string_view>
#include <vector>

namespace echomq::cli {

struct WebAsset {
  std::string_view name;  // the file's name in emq/web/assets/: "app.js"
  std::string_view body;
};

const std::vector<WebAsset>& web_assets();

}  // namespace echomq::cli
