#pragma once

// The stages' namespaces (docs/design.md, "Where things are"). The code of src/<folder>/ is in
// hwprof::<folder>, except three whose folder name is taken: analyze's is hwprof::analysis and
// calibrate's hwprof::calibration (hwprof::analyze() and hwprof::calibrate() are public
// functions), torch's hwprof::pytorch (which leaves ::torch to libtorch). hwprof::detail is
// only what the public headers' inline code needs (include/hwprof/regions.hpp).
//
// Each namespace opens the one of the stage before it in the pipeline's order, and through it
// every earlier one (a using-directive is transitive): a stage names what earlier stages declare
// without qualification, as it may include their headers (scripts/layering.py checks the same
// order), and a name it declares itself is found before theirs. A stage never sees a later
// one's names, so a helper several stages need lives in the earliest of them.
// NOLINTBEGIN(google-build-using-namespace): the order of the stages, once, here
namespace hwprof::common {}
namespace hwprof::counters {
using namespace common;
}
namespace hwprof::sampling {
using namespace counters;
}
namespace hwprof::session {
using namespace sampling;
}
namespace hwprof::ops {
using namespace session;
}
namespace hwprof::symbols {
using namespace ops;
}
namespace hwprof::graph {
using namespace symbols;
}
namespace hwprof::cost {
using namespace graph;
}
namespace hwprof::nn {
using namespace cost;
}
namespace hwprof::machine {
using namespace nn;
}
namespace hwprof::calibration {
using namespace machine;
}
namespace hwprof::placement {
using namespace calibration;
}
namespace hwprof::profile {
using namespace placement;
}
namespace hwprof::analysis {
using namespace profile;
}
namespace hwprof::report {
using namespace analysis;
}
namespace hwprof::mpi {
using namespace report;
}
namespace hwprof::pytorch {
using namespace mpi;
}
namespace hwprof::cli {
using namespace pytorch;
}
// NOLINTEND(google-build-using-namespace)
