// refinery convert IN OUT: between .onnx, .ir and .nir, any way.
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/model_files.h"

namespace refinery::cli {

Command add_convert(CLI::App& app) {
  auto* sub =
      app.add_subcommand("convert", "Convert a model between .onnx, .ir and .nir (the format follows the extension)");
  struct Args {
    std::string in, out;
  };
  auto a = std::make_shared<Args>();
  sub->add_option("IN", a->in, "input model (.onnx, .ir or .nir)")->required();
  sub->add_option("OUT", a->out, "output model (.onnx, .ir or .nir; .ir weights go to OUT.bin)")->required();
  sub->footer(
      "Examples:\n  refinery convert examples/tiny_cnn.onnx /tmp/tiny_cnn.ir\n"
      "  refinery convert /tmp/tiny_cnn.ir /tmp/tiny_cnn.onnx\n"
      "  refinery convert model.nir /tmp/model.ir");
  return {sub, [a] {
            if (auto f = format_of(a->out); !f) return report(f.error());
            auto g = load_model(a->in);
            if (!g) return report(g.error());
            if (auto ok = save_model(*g, a->out); !ok) return report(ok.error());
            fmt::print("wrote {} ({} nodes, {} constants)\n", a->out, g->num_nodes(), g->constants().size());
            return 0;
          }};
}

}  // namespace refinery::cli
