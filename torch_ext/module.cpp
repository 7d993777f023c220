// panama_torch._C: the Python face of the backend (docs/torch.md). panama_torch/__init__.py
// registers the c10d backend "panama" and the DDP hook on top of these classes.
#include <torch/csrc/utils/pybind.h>

#include "backends.h"
#include "process_group.h"

namespace py = pybind11;
using panama::torchx::Channel;
using panama::torchx::Config;
using panama::torchx::PanamaError;

namespace {

// The runner of run_unlocked: the last owner of a channel or a Gloo group may be Python (an
// object going away with the GIL held). Freeing it joins threads that may be freeing a request's
// tensors, and a tensor whose Python object died first needs the GIL to go.
void unlocked(const std::function<void()>& f) {
  if (Py_IsInitialized() && PyGILState_Check()) {
    py::gil_scoped_release nogil;
    f();
  } else {
    f();
  }
}

// Registered with atexit by panama_torch (docs/torch.md "Shutdown"): before the interpreter
// finalizes, the requests still queued or running complete and their tensors are freed. A thread
// that asks for the GIL once finalization has begun is ended by Python mid-destructor
// (std::terminate), so the channel's thread must be done with Python objects by then. The wait is
// bounded (kExitWaitMs per channel); a channel still busy after it is abandoned.
constexpr int kExitWaitMs = 60000;
void drain_at_exit() {
  for (const auto& ch : panama::torchx::open_channels()) {
    ch->close();
    const size_t n = ch->pending();
    if (n == 0) continue;
    const std::string job = std::to_string(ch->config().job);
    panama::torchx::log_once("waiting at exit (at most " + std::to_string(kExitWaitMs / 1000) + " s) for " +
                             std::to_string(n) + " all_reduce(s) of job " + job + " still queued or running");
    if (!ch->drain_for(kExitWaitMs)) {
      ch->abandon();
      panama::torchx::log_once("exiting without job " + job + "'s " + std::to_string(ch->pending()) +
                               " unfinished all_reduce(s): its peers' same calls will time out");
    }
  }
  // Channels whose last reference has gone, their queues still running (freed on another thread).
  if (const size_t n = panama::torchx::wait_freed(kExitWaitMs))
    panama::torchx::log_once("exiting while " + std::to_string(n) + " channel(s) are still being freed");
}

py::dict stats_dict(const Channel& ch) {
  const auto s = ch.stats();
  py::dict d;
  d["requests"] = ch.requests_done();
  d["calls"] = s.calls;
  d["vectors_sent"] = s.vectors_sent;
  d["results"] = s.results;
  d["lost"] = s.lost;
  d["repaired"] = s.repaired;
  d["ignored"] = s.ignored;
  d["duplicates"] = s.duplicates;
  d["bytes_reduced"] = s.bytes_reduced;
  d["seconds"] = s.seconds;
  const auto f = ch.fallback_stats();
  d["on_gloo"] = f.on_gloo;
  d["fallbacks"] = f.fallbacks;
  d["rejoins"] = f.rejoins;
  d["rejoin_attempts"] = f.rejoin_attempts;
  d["gloo_requests"] = f.gloo_requests;
  d["fell_at"] = f.fell_at;
  d["next_vids"] = f.next_vids;
  return d;
}

void bind_config(py::module_& m) {
  py::class_<Config>(m, "Config", "panama_torch's settings (docs/torch.md \"Configuration\"), validated")
      .def_static("from_env", &Config::from_env, "from PANAMA_* variables and PANAMA_CONFIG's file")
      .def_static("from_dict", &Config::from_map, "the same from a dict of PANAMA_* names (tests)")
      .def_readonly("design", &Config::design)
      .def_property_readonly("format", [](const Config& c) { return panama::to_string(c.format); })
      .def_readonly("exact_sum", &Config::exact_sum)
      .def_readonly("design_ports", &Config::design_ports)
      .def_readonly("iface", &Config::iface)
      .def_readonly("backend", &Config::backend)
      .def_readonly("job", &Config::job)
      .def_readonly("trees", &Config::trees)
      .def_readonly("timeout_ms", &Config::timeout_ms)
      .def_readonly("status_wait_ms", &Config::status_wait_ms)
      .def_readonly("group_timeout_ms", &Config::group_timeout_ms)
      .def("with_group_timeout", &Config::with_group_timeout, py::arg("ms"),
           "c10d's timeout bounds every call (PANAMA_TIMEOUT_MS / PANAMA_STATUS_WAIT_MS, when set, win)")
      .def_readonly("buffer_bytes", &Config::buffer_bytes)
      .def_readonly("chunk_bytes", &Config::chunk_bytes)
      .def_readonly("probe", &Config::probe)
      .def_readonly("fallback", &Config::fallback)
      .def_readonly("rejoin_every", &Config::rejoin_every)
      .def_readonly("rejoin_probe_ms", &Config::rejoin_probe_ms)
      .def_readonly("unknown_env", &Config::unknown_env);
  m.def("variables", &panama::torchx::variables, "every PANAMA_* name this backend reads, with its meaning");
  m.def("backends", [] {
    std::vector<std::string> v;
    for (const auto& b : panama::host::backends()) v.push_back(b.first);
    return v;
  });
}

void bind_channel(py::module_& m) {
  py::class_<Channel, std::shared_ptr<Channel>>(m, "Channel",
                                                "a job's link to the accelerator (one per job and process)")
      .def(py::init(&panama::torchx::open_channel), py::arg("config"), py::arg("rank"), py::arg("world_size"),
           py::call_guard<py::gil_scoped_release>())
      .def("probe", &Channel::probe, py::call_guard<py::gil_scoped_release>(),
           "sum known values once: raises PanamaError (switch unreachable, design mismatch)")
      .def("drain", &Channel::drain, py::call_guard<py::gil_scoped_release>())
      .def("unsupported", &panama::torchx::unsupported, "why a tensor cannot go through the accelerator ('' if it can)")
      .def(
          "allreduce",
          [](Channel& ch, const at::Tensor& t, bool mean) -> c10::intrusive_ptr<c10d::Work> {
            const std::string why = panama::torchx::unsupported(ch, t);
            if (!why.empty()) throw std::invalid_argument("panama: " + why);
            return panama::torchx::submit_tensor(ch, t, mean, {});
          },
          py::arg("tensor"), py::arg("mean") = false, py::call_guard<py::gil_scoped_release>(),
          "sum (mean: average) the tensor in place with the job's other workers; returns a c10d Work")
      .def(
          "allreduce_or_gloo",
          [](Channel& ch, const at::Tensor& t, bool mean,
             c10::intrusive_ptr<c10d::ProcessGroup> gloo) -> c10::intrusive_ptr<c10d::Work> {
            const std::string why = panama::torchx::unsupported(ch, t);
            if (!why.empty()) throw std::invalid_argument("panama: " + why);
            return panama::torchx::submit_tensor(ch, t, mean, {}, std::move(gloo));
          },
          py::arg("tensor"), py::arg("mean"), py::arg("gloo"), py::call_guard<py::gil_scoped_release>(),
          "as allreduce, with `gloo` (a process group) as the request's fallback (enable_fallback)")
      .def(
          "enable_fallback",
          [](Channel& ch, c10::intrusive_ptr<c10d::Store> store) {
            const auto& c = ch.config();
            ch.enable_fallback(std::make_shared<panama::torchx::StorePeers>(store, ch.params().rank, ch.params().world),
                               c.rejoin_every, c.rejoin_probe_ms);
          },
          py::arg("store"), "the ranks agree through `store`; failures move the requests to their fallback group")
      .def("stats", &stats_dict)
      .def_property_readonly("rank", [](const Channel& ch) { return ch.params().rank; })
      .def_property_readonly("world_size", [](const Channel& ch) { return ch.params().world; })
      .def_property_readonly("count", [](const Channel& ch) { return ch.params().count; })
      .def_property_readonly("chunk_elems", &Channel::chunk_elems)
      .def_property_readonly("config", &Channel::config);
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "panama_torch's C++ part: the c10d backend 'panama' over the host library";
  py::register_exception<PanamaError>(m, "PanamaError", PyExc_RuntimeError);
  bind_config(m);
  bind_channel(m);
  py::class_<panama::torchx::PanamaWork, c10d::Work, c10::intrusive_ptr<panama::torchx::PanamaWork>>(m, "Work");
  py::class_<panama::torchx::ProcessGroupPanama, c10d::ProcessGroup,
             c10::intrusive_ptr<panama::torchx::ProcessGroupPanama>>(m, "ProcessGroupPanama")
      .def(
          py::init<std::shared_ptr<Channel>, c10::intrusive_ptr<c10d::ProcessGroup>, c10::intrusive_ptr<c10d::Store>>(),
          py::arg("channel"), py::arg("gloo"), py::arg("store"))
      .def_property_readonly("channel", &panama::torchx::ProcessGroupPanama::channel)
      .def_property_readonly("fallback", &panama::torchx::ProcessGroupPanama::fallback);
  m.def("log_once", &panama::torchx::log_once);
  panama::torchx::set_unlocked_runner(&unlocked);
  m.def("_drain_at_exit", &drain_at_exit, py::call_guard<py::gil_scoped_release>(),
        "wait for every open channel's requests (panama_torch registers it with atexit)");
}
