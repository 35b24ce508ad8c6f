// The layers: shapes and attributes of a node turned into kernel calls (kernels.hpp), and the
// tensors each one keeps between its training forward and its backward — no more than the
// analytic cost model says it saves (src/cost/op_cost.cpp), so measured training memory can
// be compared with the estimate.
#include "nn/layers.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "common/stages.hpp"
#include "graph/shape_inference.hpp"
#include "nn/init.hpp"
#include "nn/kernels.hpp"
#include "ops/ops.hpp"

namespace hwprof::nn {
namespace {

float* ptr(Tensor& t) noexcept {
  return t.defined() ? t.f32() : nullptr;
}
float* value_of(ParameterSlot* p) noexcept {
  return p != nullptr ? p->value.f32() : nullptr;
}
float* gradient_of(ParameterSlot* p) noexcept {
  return p != nullptr ? ptr(p->gradient) : nullptr;
}

Tensor gradient_like(const Tensor& x, bool needed) {
  return needed ? Tensor::empty(x.shape()) : Tensor();
}

// [outer, dim, inner] around `axis` of a full shape.
struct AxisSplit {
  i64 outer = 1, dim = 1, inner = 1;
};
AxisSplit split_at(const Shape& full, std::size_t axis) {
  AxisSplit s;
  for (std::size_t d = 0; d < full.size(); ++d) {
    if (d < axis) s.outer *= full[d];
    if (d == axis) s.dim = full[d];
    if (d > axis) s.inner *= full[d];
  }
  return s;
}

// A per-sample axis (Python-style, may be negative) as an axis of the batched tensor.
std::size_t batched_axis(std::int64_t axis, const Shape& per_sample) {
  return static_cast<std::size_t>(normalized_axis(axis, static_cast<std::int64_t>(per_sample.size())) + 1);
}

class LinearLayer final : public Layer {
 public:
  LinearLayer(const Node& node, i64 in_features, std::span<ParameterSlot* const> p)
      : out_(node.output_shape), k_(in_features), n_(node.attrs.out_features), w_(p[0]), b_(p.size() > 1 ? p[1] : nullptr) {}

  Result<Tensor> forward(std::span<const Tensor* const> in, const ForwardContext& c) override {
    const Tensor& x = *in[0];
    Tensor y = Tensor::empty(batched(x.dim(0), out_));
    linear_forward(x.f32(), value_of(w_), value_of(b_), y.f32(), x.numel() / k_, k_, n_);
    if (c.training) x_ = x;
    return y;
  }
  void backward(const Tensor& dy, std::span<Tensor> dx, std::span<const char> need) override {
    dx[0] = gradient_like(x_, need[0] != 0);
    linear_backward(x_.f32(), value_of(w_), dy.f32(), ptr(dx[0]), gradient_of(w_), gradient_of(b_), x_.numel() / k_, k_, n_);
  }
  void release_saved() noexcept override { x_ = Tensor(); }

 private:
  Shape out_;
  i64 k_, n_;
  ParameterSlot* w_;
  ParameterSlot* b_;
  Tensor x_;
};

// The convolution geometry from per-sample [C, H, W] (conv3d: [C, D, H, W]) input and output
// shapes and a node's window.
Conv2dGeometry conv_geometry(const Attributes& a, const Shape& in, const Shape& out) {
  Conv2dGeometry g;
  // [C, L], [C, H, W] or [C, D, H, W]: a 1-D convolution is the 2-D one over a height of 1 (its
  // attributes' h a window of 1, ops/convolution.cpp), a 2-D one the depth-1 3-D one.
  const std::size_t spatial = in.size() - 1;
  if (spatial == 3) {
    g.in_d = in[1];
    g.out_d = out[1];
    g.kernel_d = a.depth.kernel;
    g.stride_d = a.depth.stride;
    g.pad_d = a.depth.padding;
    g.dilation_d = a.depth.dilation;
  }
  g.in_channels = in[0];
  g.in_h = spatial >= 2 ? in[spatial - 1] : 1;
  g.in_w = in[spatial];
  g.out_channels = out[0];
  g.out_h = spatial >= 2 ? out[spatial - 1] : 1;
  g.out_w = out[spatial];
  g.kernel_h = a.kernel.h;
  g.kernel_w = a.kernel.w;
  g.stride_h = a.stride.h;
  g.stride_w = a.stride.w;
  g.pad_h = a.padding.h;
  g.pad_w = a.padding.w;
  g.dilation_h = a.dilation.h;
  g.dilation_w = a.dilation.w;
  g.groups = a.groups;
  return g;
}

// conv2d and conv3d (the geometry's depth axis).
class Conv2dLayer final : public Layer {
 public:
  Conv2dLayer(const Node& node, const Shape& in, std::span<ParameterSlot* const> p)
      : out_(node.output_shape), g_(conv_geometry(node.attrs, in, out_)), w_(p[0]), b_(p.size() > 1 ? p[1] : nullptr) {}

  Result<Tensor> forward(std::span<const Tensor* const> in, const ForwardContext& c) override {
    const Tensor& x = *in[0];
    g_.batch = x.dim(0);
    Tensor y = Tensor::empty(batched(g_.batch, out_));
    conv2d_forward(g_, x.f32(), value_of(w_), value_of(b_), y.f32());
    if (c.training) x_ = x;
    return y;
  }
  void backward(const Tensor& dy, std::span<Tensor> dx, std::span<const char> need) override {
    g_.batch = x_.dim(0);
    dx[0] = gradient_like(x_, need[0] != 0);
    conv2d_backward(g_, x_.f32(), value_of(w_), dy.f32(), ptr(dx[0]), gradient_of(w_), gradient_of(b_));
  }
  void release_saved() noexcept override { x_ = Tensor(); }

 private:
  Shape out_;
  Conv2dGeometry g_;
  ParameterSlot* w_;
  ParameterSlot* b_;
  Tensor x_;
};

// ConvTranspose2d is conv2d's data gradient: with the conv2d geometry that maps this layer's
// output shape to its input shape (same kernel, stride, padding, dilation, groups; the weight
// [in, out/groups, kh, kw] is exactly that conv2d's [K, C/groups, R, S]), forward is
// conv2d_backward's dx, backward's dx is conv2d_forward, and the weight gradient is conv2d's
// with the roles of input and output gradient exchanged. conv_transpose3d is the same with
// conv3d's geometry: conv_geometry reads the depth from the [C, D, H, W] shapes, and the bias
// covers a channel's D·H·W.
class ConvTranspose2dLayer final : public Layer {
 public:
  ConvTranspose2dLayer(const Node& node, const Shape& in, std::span<ParameterSlot* const> p)
      : out_(node.output_shape), g_(conv_geometry(node.attrs, out_, in)), w_(p[0]), b_(p.size() > 1 ? p[1] : nullptr) {}

  Result<Tensor> forward(std::span<const Tensor* const> in, const ForwardContext& c) override {
    const Tensor& x = *in[0];
    g_.batch = x.dim(0);
    Tensor y = Tensor::empty(batched(g_.batch, out_));
    conv2d_backward(g_, nullptr, value_of(w_), x.f32(), y.f32(), nullptr, nullptr);
    if (const float* b = value_of(b_); b != nullptr) {
      const i64 plane = numel(out_) / out_[0];
      float* p = y.f32();
      for (i64 item = 0; item < g_.batch * out_[0]; ++item) {
        const float bias = b[item % out_[0]];
        for (i64 i = 0; i < plane; ++i) p[item * plane + i] += bias;
      }
    }
    if (c.training) x_ = x;
    return y;
  }
  void backward(const Tensor& dy, std::span<Tensor> dx, std::span<const char> need) override {
    g_.batch = x_.dim(0);
    dx[0] = gradient_like(x_, need[0] != 0);
    if (dx[0].defined()) conv2d_forward(g_, dy.f32(), value_of(w_), nullptr, dx[0].f32());
    // dW: conv2d's weight gradient with input dy and output gradient x.
    if (float* dw = gradient_of(w_); dw != nullptr) conv2d_backward(g_, dy.f32(), value_of(w_), x_.f32(), nullptr, dw, nullptr);
    if (float* db = gradient_of(b_); db != nullptr) {
      const i64 plane = numel(out_) / out_[0];
      for (i64 k = 0; k < out_[0]; ++k) {
        double total = 0.0;
        for (i64 n = 0; n < g_.batch; ++n) {
          const float* p = dy.f32() + (n * out_[0] + k) * plane;
          for (i64 i = 0; i < plane; ++i) total += p[i];
        }
        db[k] += static_cast<float>(total);
      }
    }
  }
  void release_saved() noexcept override { x_ = Tensor(); }

 private:
  Shape out_;
  Conv2dGeometry g_;
  ParameterSlot* w_;
  ParameterSlot* b_;
  Tensor x_;
};

// PyTorch's BatchNorm2d defaults: momentum 0.1 for the running statistics.
constexpr double kBatchNormMomentum = 0.1;

// A batch norm (batchnorm2d, batchnorm3d): per-channel statistics over every other axis and the
// batch.
class BatchNormLayer final : public Layer {
 public:
  BatchNormLayer(const Node& node, const Shape& in, std::span<ParameterSlot* const> p)
      : eps_(node.attrs.eps),
        c_(in[0]),
        hw_(numel(in) / in[0]),
        gamma_(p[0]),
        beta_(p[1]),
        // Buffers, as reset_running_stats() starts them: mean 0, variance 1.
        running_mean_(Tensor::zeros({c_})),
        running_var_(Tensor::empty({c_})) {
    std::fill_n(running_var_.f32(), c_, 1.0f);
    // Or as the model file gives them (checked by check_initial_values).
    if (const InitialValue* mean = find_initial_value(node, "running_mean")) load_initial_value(*mean, running_mean_);
    if (const InitialValue* var = find_initial_value(node, "running_var")) load_initial_value(*var, running_var_);
  }

  Result<Tensor> forward(std::span<const Tensor* const> in, const ForwardContext& c) override {
    const Tensor& x = *in[0];
    const i64 n = x.dim(0);
    Tensor y = Tensor::empty(x.shape());
    if (!c.training) {
      batchnorm2d_forward_eval(x.f32(), value_of(gamma_), value_of(beta_), running_mean_.f32(), running_var_.f32(), eps_, y.f32(), n, c_, hw_);
      return y;
    }
    mean_ = Tensor::empty({c_});
    invstd_ = Tensor::empty({c_});
    batchnorm2d_forward_train(x.f32(), value_of(gamma_), value_of(beta_), running_mean_.f32(), running_var_.f32(), eps_, kBatchNormMomentum, y.f32(),
                              mean_.f32(), invstd_.f32(), n, c_, hw_);
    x_ = x;
    return y;
  }
  void backward(const Tensor& dy, std::span<Tensor> dx, std::span<const char> need) override {
    dx[0] = gradient_like(x_, need[0] != 0);
    batchnorm2d_backward(x_.f32(), value_of(gamma_), mean_.f32(), invstd_.f32(), dy.f32(), ptr(dx[0]), gradient_of(gamma_), gradient_of(beta_),
                         x_.dim(0), c_, hw_);
  }
  void release_saved() noexcept override {
    x_ = Tensor();
    mean_ = Tensor();
    invstd_ = Tensor();
  }

 private:
  double eps_;
  i64 c_, hw_;
  ParameterSlot* gamma_;
  ParameterSlot* beta_;
  Tensor running_mean_, running_var_;
  Tensor x_, mean_, invstd_;
};

class LayerNormLayer final : public Layer {
 public:
  LayerNormLayer(const Node& node, const Shape& in, std::span<ParameterSlot* const> p)
      : eps_(node.attrs.eps), d_(in.back()), gamma_(p[0]), beta_(p[1]) {}

  Result<Tensor> forward(std::span<const Tensor* const> in, const ForwardContext& c) override {
    const Tensor& x = *in[0];
    const i64 rows = x.numel() / d_;
    Tensor y = Tensor::empty(x.shape());
    if (c.training) {
      mean_ = Tensor::empty({rows});
      invstd_ = Tensor::empty({rows});
      x_ = x;
    }
    layernorm_forward(x.f32(), value_of(gamma_), value_of(beta_), eps_, y.f32(), ptr(mean_), ptr(invstd_), rows, d_);
    return y;
  }
  void backward(const Tensor& dy, std::span<Tensor> dx, std::span<const char> need) override {
    dx[0] = gradient_like(x_, need[0] != 0);
    layernorm_backward(x_.f32(), value_of(gamma_), mean_.f32(), invstd_.f32(), dy.f32(), ptr(dx[0]), gradient_of(gamma_), gradient_of(beta_),
                       x_.numel() / d_, d_);
  }
  void release_saved() noexcept override {
    x_ = Tensor();
    mean_ = Tensor();
    invstd_ = Tensor();
  }

 private:
  double eps_;
  i64 d_;
  ParameterSlot* gamma_;
  ParameterSlot* beta_;
  Tensor x_, mean_, invstd_;
};

}  // namespace

namespace {

class ActivationLayer final : public Layer {
 public:
  // `form`: the op's definition's kernels and traits, whose backward_reads_output says which of
  // x and y its backward reads, and so which one training keeps. `parameter`: the op's one
  // number (leaky_relu's slope, elu's α), 0 for the others.
  ActivationLayer(const hwprof::ops::UnaryForm& form, float parameter) : form_(form), parameter_(parameter) {}

  Result<Tensor> forward(std::span<const Tensor* const> in, const ForwardContext& c) override {
    const Tensor& x = *in[0];
    // Element-wise: each y[i] is written after x[i] is read, so y may be x's storage.
    Tensor y = (c.reusable_inputs & 1U) != 0 ? x : Tensor::empty(x.shape());
    unary_forward(form_, x.f32(), y.f32(), x.numel(), parameter_);
    if (c.training) {
      if (form_.traits.backward_reads_output) {
        y_ = y;
      } else {
        x_ = x;
      }
    }
    return y;
  }
  void backward(const Tensor& dy, std::span<Tensor> dx, std::span<const char> need) override {
    Tensor& kept = x_.defined() ? x_ : y_;
    dx[0] = gradient_like(kept, need[0] != 0);
    if (dx[0].defined()) unary_backward(form_, kept.f32(), dy.f32(), dx[0].f32(), kept.numel(), parameter_);
  }
  void release_saved() noexcept override {
    x_ = Tensor();
    y_ = Tensor();
  }

 private:
  const hwprof::ops::UnaryForm& form_;
  float parameter_;
  Tensor x_, y_;
};

class SoftmaxLayer final : public Layer {
 public:
  SoftmaxLayer(const Node& node, const Shape& in) : axis_(batched_axis(node.attrs.axis, in)) {}

  Result<Tensor> forward(std::span<const Tensor* const> in, const ForwardContext& c) override {
    const Tensor& x = *in[0];
    const AxisSplit s = split_at(x.shape(), axis_);
    Tensor y = Tensor::empty(x.shape());
    softmax_forward(x.f32(), y.f32(), s.outer, s.dim, s.inner);
    if (c.training) y_ = y;
    return y;
  }
  void backward(const Tensor& dy, std::span<Tensor> dx, std::span<const char> need) override {
    dx[0] = gradient_like(y_, need[0] != 0);
    if (!dx[0].defined()) return;
    const AxisSplit s = split_at(y_.shape(), axis_);
    softmax_backward(y_.f32(), dy.f32(), dx[0].f32(), s.outer, s.dim, s.inner);
  }
  void release_saved() noexcept override { y_ = Tensor(); }

 private:
  std::size_t axis_;
  Tensor y_;
};

// A pooling op: its definition's reduction over its axes, on the engine's kernels of them
// (pool_kernels); max pooling keeps its argmax in training for backward.
class PoolLayer final : public Layer {
 public:
  PoolLayer(const hwprof::ops::PoolingDefinition& def, const PoolKernels& kernels, const Node& node, const Shape& in)
      : keeps_argmax_(def.reduction == hwprof::ops::PoolReduction::max),
        kernels_(kernels),
        out_(node.output_shape),
        in_(in),
        g_(pool_geometry(def, node, in)) {}

  Result<Tensor> forward(std::span<const Tensor* const> in, const ForwardContext& c) override {
    const Tensor& x = *in[0];
    g_.batch = x.dim(0);
    Tensor y = Tensor::empty(batched(g_.batch, out_));
    if (keeps_argmax_ && c.training) argmax_ = Tensor::empty(y.shape(), DType::i32);
    kernels_.forward(g_, x.f32(), y.f32(), argmax_.defined() ? argmax_.i32() : nullptr);
    return y;
  }
  void backward(const Tensor& dy, std::span<Tensor> dx, std::span<const char> need) override {
    if (need[0] == 0) return;
    g_.batch = dy.dim(0);
    dx[0] = Tensor::empty(batched(g_.batch, in_));
    kernels_.backward(g_, argmax_.defined() ? argmax_.i32() : nullptr, dy.f32(), dx[0].f32());
  }
  void release_saved() noexcept override { argmax_ = Tensor(); }

 private:
  bool keeps_argmax_;
  const PoolKernels& kernels_;
  Shape out_, in_;
  Pool3dGeometry g_;
  Tensor argmax_;
};

class UpsampleLayer final : public Layer {
 public:
  UpsampleLayer(const Node& node, const Shape& in) : out_(node.output_shape), in_(in) {
    const Attributes& a = node.attrs;
    g_.channels = in[0];
    g_.in_h = in[1];
    g_.in_w = in[2];
    g_.out_h = out_[1];
    g_.out_w = out_[2];
    // A size given outright leaves the scale at 0: the kernels then use in / out.
    g_.scale_h = a.size.h > 0 ? 0.0 : a.scale.h;
    g_.scale_w = a.size.w > 0 ? 0.0 : a.scale.w;
    g_.bilinear = a.mode == UpsampleMode::bilinear;
    g_.align_corners = a.align_corners;
  }

  Result<Tensor> forward(std::span<const Tensor* const> in, const ForwardContext&) override {
    const Tensor& x = *in[0];
    g_.batch = x.dim(0);
    Tensor y = Tensor::empty(batched(g_.batch, out_));
    upsample_forward(g_, x.f32(), y.f32());
    return y;
  }
  void backward(const Tensor& dy, std::span<Tensor> dx, std::span<const char> need) override {
    if (need[0] == 0) return;
    g_.batch = dy.dim(0);
    dx[0] = Tensor::empty(batched(g_.batch, in_));
    upsample_backward(g_, dy.f32(), dx[0].f32());
  }

 private:
  Shape out_, in_;
  UpsampleGeometry g_;
};

// reduce: the sum or mean over per-sample axes; the kernels take the batched shape, whose
// axis 0 (the batch) is never reduced.
class ReduceLayer final : public Layer {
 public:
  ReduceLayer(const Node& node, const Shape& in) : in_(in), out_(node.output_shape) {
    g_.mean = ops::reduce_mode(node.attrs.reduce_mode).divides;
    g_.shape.assign(in.size() + 1, 1);
    g_.reduced.assign(in.size() + 1, 0);
    for (std::size_t d = 0; d < in.size(); ++d) g_.shape[d + 1] = in[d];
    for (std::int64_t axis : node.attrs.axes) g_.reduced[batched_axis(axis, in)] = 1;
  }

  Result<Tensor> forward(std::span<const Tensor* const> in, const ForwardContext&) override {
    const Tensor& x = *in[0];
    g_.shape[0] = x.dim(0);
    Tensor y = Tensor::empty(batched(x.dim(0), out_));
    reduce_forward(g_, x.f32(), y.f32());
    return y;
  }
  void backward(const Tensor& dy, std::span<Tensor> dx, std::span<const char> need) override {
    if (need[0] == 0) return;
    g_.shape[0] = dy.dim(0);
    dx[0] = Tensor::empty(batched(dy.dim(0), in_));
    reduce_backward(g_, dy.f32(), dx[0].f32());
  }

 private:
  Shape in_, out_;
  ReduceGeometry g_;
};

// flatten, reshape, and dropout in evaluation (or with p = 0): the output is the input's
// storage under the output's shape; nothing is copied, nothing allocated but the handle.
class ViewLayer final : public Layer {
 public:
  ViewLayer(const Node& node, const Shape& in) : out_(node.output_shape), in_(in) {}

  Result<Tensor> forward(std::span<const Tensor* const> in, const ForwardContext&) override { return in[0]->reshaped(batched(in[0]->dim(0), out_)); }
  void backward(const Tensor& dy, std::span<Tensor> dx, std::span<const char> need) override {
    if (need[0] != 0) dx[0] = dy.reshaped(batched(dy.dim(0), in_));
  }
  bool input_gradients_alias_dy() const noexcept override { return true; }

 private:
  Shape out_, in_;
};

class DropoutLayer final : public Layer {
 public:
  explicit DropoutLayer(const Node& node) : p_(node.attrs.p) {}

  Result<Tensor> forward(std::span<const Tensor* const> in, const ForwardContext& c) override {
    const Tensor& x = *in[0];
    // Evaluation, and training with p = 0, are the identity: PyTorch's F.dropout returns its
    // input in evaluation; with p = 0 every element is kept and scaled by 1.
    if (!c.training || p_ == 0.0) return x;
    Tensor y = Tensor::empty(x.shape());
    // One byte per element, in an int32 tensor so the tracking allocator counts it.
    mask_ = Tensor::empty({(x.numel() + 3) / 4}, DType::i32);
    dropout_forward(x.f32(), y.f32(), mask(), p_, c.dropout_key, x.numel());
    return y;
  }
  void backward(const Tensor& dy, std::span<Tensor> dx, std::span<const char> need) override {
    if (need[0] == 0) return;
    if (!mask_.defined()) {  // the identity's gradient is dy itself
      dx[0] = dy;
      return;
    }
    dx[0] = Tensor::empty(dy.shape());
    dropout_backward(mask(), dy.f32(), dx[0].f32(), p_, dy.numel());
  }
  void release_saved() noexcept override { mask_ = Tensor(); }
  // Only with p = 0 (no mask); a real dropout's dx is a fresh tensor, but saying "aliases"
  // for both costs at most one copy when that gradient is summed.
  bool input_gradients_alias_dy() const noexcept override { return p_ == 0.0; }

 private:
  std::uint8_t* mask() noexcept { return static_cast<std::uint8_t*>(mask_.data()); }
  double p_;
  Tensor mask_;
};

class AddLayer final : public Layer {
 public:
  Result<Tensor> forward(std::span<const Tensor* const> in, const ForwardContext& c) override {
    Tensor y = (c.reusable_inputs & 1U) != 0 ? *in[0] : (c.reusable_inputs & 2U) != 0 ? *in[1] : Tensor::empty(in[0]->shape());
    add_forward(in[0]->f32(), in[1]->f32(), y.f32(), y.numel());
    return y;
  }
  void backward(const Tensor& dy, std::span<Tensor> dx, std::span<const char> need) override {
    for (std::size_t k = 0; k < 2; ++k) {
      if (need[k] != 0) dx[k] = dy;
    }
  }
  bool input_gradients_alias_dy() const noexcept override { return true; }
};

// The broadcast plan of two full shapes, made again only when a shape changes (a new batch).
class BroadcastPlan {
 public:
  const Broadcast& of(const Shape& a, const Shape& b) {
    if (a != a_ || b != b_) {
      a_ = a;
      b_ = b;
      plan_ = make_broadcast(a, b);
    }
    return plan_;
  }
  const Broadcast& plan() const noexcept { return plan_; }

 private:
  Shape a_, b_;
  Broadcast plan_;
};

// add with broadcasting, sub, mul, div: NumPy's broadcasting between inputs of one rank.
class BinaryLayer final : public Layer {
 public:
  explicit BinaryLayer(BinaryOp op) : op_(op) {}

  Result<Tensor> forward(std::span<const Tensor* const> in, const ForwardContext& c) override {
    const Tensor& a = *in[0];
    const Tensor& b = *in[1];
    const Broadcast& p = plan_.of(a.shape(), b.shape());
    // Element-wise: y[i] is written after the input of the output's own shape is read at i,
    // so y may be that input's storage.
    Tensor y = (c.reusable_inputs & 1U) != 0 && a.shape() == p.out   ? a
               : (c.reusable_inputs & 2U) != 0 && b.shape() == p.out ? b
                                                                     : Tensor::empty(p.out);
    binary_forward(op_, a.f32(), b.f32(), y.f32(), p);
    if (c.training && (op_ == BinaryOp::mul || op_ == BinaryOp::div)) {
      a_ = a;
      b_ = b;
    }
    a_shape_ = a.shape();
    b_shape_ = b.shape();
    return y;
  }
  void backward(const Tensor& dy, std::span<Tensor> dx, std::span<const char> need) override {
    dx[0] = need[0] != 0 ? Tensor::empty(a_shape_) : Tensor();
    dx[1] = need[1] != 0 ? Tensor::empty(b_shape_) : Tensor();
    const float* a = a_.defined() ? a_.f32() : nullptr;
    const float* b = b_.defined() ? b_.f32() : nullptr;
    binary_backward(op_, a, b, dy.f32(), dx[0].defined() ? dx[0].f32() : nullptr, dx[1].defined() ? dx[1].f32() : nullptr, plan_.plan());
  }
  void release_saved() noexcept override {
    a_ = Tensor();
    b_ = Tensor();
  }

 private:
  BinaryOp op_;
  BroadcastPlan plan_;
  Shape a_shape_, b_shape_;
  Tensor a_, b_;
};

// The product of two activations, their leading axes broadcast (the matmul op).
class MatmulLayer final : public Layer {
 public:
  Result<Tensor> forward(std::span<const Tensor* const> in, const ForwardContext& c) override {
    const Tensor& a = *in[0];
    const Tensor& b = *in[1];
    if (a.shape() != a_shape_ || b.shape() != b_shape_) {
      plan_ = make_matmul_plan(a.shape(), b.shape());
      a_shape_ = a.shape();
      b_shape_ = b.shape();
    }
    Tensor y = Tensor::empty(plan_.out);
    matmul_forward(plan_, a.f32(), b.f32(), y.f32());
    if (c.training) {
      a_ = a;
      b_ = b;
    }
    return y;
  }
  void backward(const Tensor& dy, std::span<Tensor> dx, std::span<const char> need) override {
    dx[0] = gradient_like(a_, need[0] != 0);
    dx[1] = gradient_like(b_, need[1] != 0);
    matmul_backward(plan_, a_.f32(), b_.f32(), dy.f32(), dx[0].defined() ? dx[0].f32() : nullptr, dx[1].defined() ? dx[1].f32() : nullptr);
  }
  void release_saved() noexcept override {
    a_ = Tensor();
    b_ = Tensor();
  }

 private:
  MatmulPlan plan_;
  Shape a_shape_, b_shape_;
  Tensor a_, b_;
};

// add, sub, mul, div of one input and an operand tensor broadcast to it: a constant (the buffer
// "operand", from the model file or the op's identity) or a learned parameter.
class OperandLayer final : public Layer {
 public:
  OperandLayer(const hwprof::ops::BinaryDefinition& binary, const Node& node, std::span<ParameterSlot* const> params)
      : op_(binary.arithmetic), shape_(batched(1, node.attrs.operand)), w_(node.attrs.operand_trainable ? params[0] : nullptr) {
    if (w_ == nullptr) {
      constant_ = Tensor::empty(node.attrs.operand);
      if (const InitialValue* v = find_initial_value(node, "operand")) {
        load_initial_value(*v, constant_);
      } else {
        std::fill_n(constant_.f32(), constant_.numel(), static_cast<float>(binary.identity));
      }
    }
  }

  Result<Tensor> forward(std::span<const Tensor* const> in, const ForwardContext& c) override {
    const Tensor& x = *in[0];
    Tensor y = (c.reusable_inputs & 1U) != 0 ? x : Tensor::empty(x.shape());
    binary_forward(op_, x.f32(), operand(), y.f32(), plan_.of(x.shape(), shape_));
    if (c.training && (op_ == BinaryOp::mul || op_ == BinaryOp::div) && w_ != nullptr) x_ = x;
    x_shape_ = x.shape();
    return y;
  }
  void backward(const Tensor& dy, std::span<Tensor> dx, std::span<const char> need) override {
    dx[0] = need[0] != 0 ? Tensor::empty(x_shape_) : Tensor();
    if (dx[0].defined()) binary_backward(op_, nullptr, operand(), dy.f32(), dx[0].f32(), nullptr, plan_.plan());
    float* dw = gradient_of(w_);
    if (dw == nullptr) return;
    // The operand's gradient is a sum over the batch: one sample at a time into a scratch row.
    const i64 batch = x_shape_[0];
    const i64 per_sample = plan_.plan().numel() / batch;
    Shape sample = x_shape_;
    sample[0] = 1;
    const Broadcast one = make_broadcast(sample, shape_);  // the kernel never broadcasts the batch axis
    Tensor scratch = Tensor::empty(shape_);
    for (i64 s = 0; s < batch; ++s) {
      const float* xs = x_.defined() ? x_.f32() + s * per_sample : nullptr;
      binary_backward(op_, xs, operand(), dy.f32() + s * per_sample, nullptr, scratch.f32(), one);
      for (i64 i = 0; i < scratch.numel(); ++i) dw[i] += scratch.f32()[i];
    }
  }
  void release_saved() noexcept override { x_ = Tensor(); }

 private:
  const float* operand() const { return w_ != nullptr ? value_of(w_) : constant_.f32(); }

  BinaryOp op_;
  Shape shape_;  // [1, operand...]
  ParameterSlot* w_;
  Tensor constant_;
  BroadcastPlan plan_;
  Shape x_shape_;
  Tensor x_;
};

class ConcatLayer final : public Layer {
 public:
  ConcatLayer(const Graph& graph, const Node& node) : out_(node.output_shape), dtype_(node.output_dtype) {
    const Shape& first = graph.shape_of(node.inputs[0]);
    axis_ = batched_axis(node.attrs.axis, first);
    for (int input : node.inputs) {
      const Shape& s = graph.shape_of(input);
      sizes_.push_back(s[axis_ - 1]);
      in_.push_back(s);
    }
    xs_.resize(node.inputs.size());
    dxs_.resize(node.inputs.size());
  }

  Result<Tensor> forward(std::span<const Tensor* const> in, const ForwardContext&) override {
    const i64 batch = in[0]->dim(0);
    Tensor y = Tensor::empty(batched(batch, out_), dtype_);
    for (std::size_t k = 0; k < in.size(); ++k) xs_[k] = in[k]->data();
    const AxisSplit s = split_at(y.shape(), axis_);
    concat_forward(xs_, sizes_, y.data(), s.outer, s.inner);
    return y;
  }
  void backward(const Tensor& dy, std::span<Tensor> dx, std::span<const char> need) override {
    const i64 batch = dy.dim(0);
    for (std::size_t k = 0; k < dx.size(); ++k) {
      dx[k] = need[k] != 0 ? Tensor::empty(batched(batch, in_[k])) : Tensor();
      dxs_[k] = ptr(dx[k]);
    }
    const AxisSplit s = split_at(dy.shape(), axis_);
    concat_backward(dy.f32(), dxs_, sizes_, s.outer, s.inner);
  }

 private:
  Shape out_;
  DType dtype_;
  std::size_t axis_ = 1;
  std::vector<i64> sizes_;
  std::vector<Shape> in_;
  std::vector<const void*> xs_;  // sized once: a pass allocates no bookkeeping
  std::vector<float*> dxs_;
};

class TransposeLayer final : public Layer {
 public:
  TransposeLayer(const Node& node, const Shape& in) : out_(node.output_shape), in_(in) {
    perm_.push_back(0);
    for (std::int64_t p : node.attrs.perm) perm_.push_back(p + 1);
    inverse_.resize(perm_.size());
    for (std::size_t d = 0; d < perm_.size(); ++d) inverse_[static_cast<std::size_t>(perm_[d])] = static_cast<i64>(d);
  }

  Result<Tensor> forward(std::span<const Tensor* const> in, const ForwardContext&) override {
    const Tensor& x = *in[0];
    Tensor y = Tensor::empty(batched(x.dim(0), out_), x.dtype());
    permute(x.data(), y.data(), x.shape(), perm_);
    return y;
  }
  void backward(const Tensor& dy, std::span<Tensor> dx, std::span<const char> need) override {
    if (need[0] == 0) return;
    dx[0] = Tensor::empty(batched(dy.dim(0), in_));
    permute(dy.data(), dx[0].data(), dy.shape(), inverse_);
  }

 private:
  Shape out_, in_;
  std::vector<i64> perm_, inverse_;
};

class SelectLayer final : public Layer {
 public:
  SelectLayer(const Node& node, const Shape& in) : out_(node.output_shape), in_(in), axis_(batched_axis(node.attrs.axis, in)) {
    index_ = normalized_axis(node.attrs.index, in[axis_ - 1]);
  }

  Result<Tensor> forward(std::span<const Tensor* const> in, const ForwardContext&) override {
    const Tensor& x = *in[0];
    Tensor y = Tensor::empty(batched(x.dim(0), out_), x.dtype());
    const AxisSplit s = split_at(x.shape(), axis_);
    select_forward(x.data(), y.data(), s.outer, s.dim, s.inner, index_);
    return y;
  }
  void backward(const Tensor& dy, std::span<Tensor> dx, std::span<const char> need) override {
    if (need[0] == 0) return;
    dx[0] = Tensor::empty(batched(dy.dim(0), in_));
    const AxisSplit s = split_at(dx[0].shape(), axis_);
    select_backward(dy.f32(), dx[0].f32(), s.outer, s.dim, s.inner, index_);
  }

 private:
  Shape out_, in_;
  std::size_t axis_;
  i64 index_ = 0;
};

// The per-sample strided view (kernels.hpp) a slice, expand or tile copies from its input:
// slice: the kept positions, stride × step from the first one's offset; expand: stride 0 on
// each broadcast axis; tile: each axis as a pair [copies (stride 0), size].
StridedView per_sample_view(const Node& node, const Shape& in) {
  std::vector<i64> stride(in.size(), 1);
  for (auto d = in.size(); d-- > 1;) stride[d - 1] = stride[d] * in[d];
  StridedView v;
  if (node.op == OpKind::slice) {
    const std::vector<hwprof::graph::SliceRange> ranges = hwprof::graph::slice_ranges(in, node.attrs);
    for (std::size_t d = 0; d < in.size(); ++d) {
      v.size.push_back(ranges[d].count);
      v.stride.push_back(ranges[d].count > 1 ? stride[d] * ranges[d].step : stride[d]);  // |step| < size when it is used
      v.offset += ranges[d].start * stride[d];
    }
  } else if (node.op == OpKind::expand) {
    for (std::size_t d = 0; d < in.size(); ++d) {
      v.size.push_back(node.output_shape[d]);
      v.stride.push_back(in[d] == 1 && node.output_shape[d] != 1 ? 0 : stride[d]);
    }
  } else {
    for (std::size_t d = 0; d < in.size(); ++d) {
      v.size.insert(v.size.end(), {node.attrs.repeats[d], in[d]});
      v.stride.insert(v.stride.end(), {0, stride[d]});
    }
  }
  return v;
}

// The per-sample view with the batch axis first (its size set at each call, its stride a whole
// sample of `sample` elements).
StridedView batched_view(const StridedView& per_sample, i64 sample) {
  StridedView v;
  v.offset = per_sample.offset;
  v.size.push_back(1);
  v.size.insert(v.size.end(), per_sample.size.begin(), per_sample.size.end());
  v.stride.push_back(sample);
  v.stride.insert(v.stride.end(), per_sample.stride.begin(), per_sample.stride.end());
  return v;
}

// slice, expand, tile: a strided view of the input copied out; the batch axis is prepended to
// the per-sample view (batched_view), its size set at each call.
class StridedCopyLayer final : public Layer {
 public:
  StridedCopyLayer(const Node& node, const Shape& in) : out_(node.output_shape), in_(in), view_(batched_view(per_sample_view(node, in), numel(in))) {}

  Result<Tensor> forward(std::span<const Tensor* const> in, const ForwardContext&) override {
    const Tensor& x = *in[0];
    view_.size[0] = x.dim(0);
    Tensor y = Tensor::empty(batched(x.dim(0), out_), x.dtype());
    strided_copy(x.data(), y.data(), view_);
    return y;
  }
  void backward(const Tensor& dy, std::span<Tensor> dx, std::span<const char> need) override {
    if (need[0] == 0) return;
    view_.size[0] = dy.dim(0);
    dx[0] = Tensor::empty(batched(dy.dim(0), in_));
    strided_copy_backward(dy.f32(), dx[0].f32(), dx[0].numel(), view_);
  }

 private:
  Shape out_, in_;
  StridedView view_;
};

PadGeometry pad_geometry(const Node& node, const Shape& in) {
  PadGeometry g;
  g.in = batched(1, in);
  g.out = batched(1, node.output_shape);
  g.before.push_back(0);
  for (std::size_t d = 0; d < in.size(); ++d) g.before.push_back(node.attrs.pads[d]);
  const PadMode mode = node.attrs.pad_mode;
  g.fill = mode == PadMode::reflect ? PadFill::reflect : mode == PadMode::edge ? PadFill::edge : PadFill::constant;
  g.value = static_cast<float>(node.attrs.pad_value);
  return g;
}

class PadLayer final : public Layer {
 public:
  PadLayer(const Node& node, const Shape& in) : g_(pad_geometry(node, in)) {}

  Result<Tensor> forward(std::span<const Tensor* const> in, const ForwardContext&) override {
    const Tensor& x = *in[0];
    g_.in[0] = g_.out[0] = x.dim(0);
    Tensor y = Tensor::empty(g_.out);
    pad_forward(g_, x.f32(), y.f32());
    return y;
  }
  void backward(const Tensor& dy, std::span<Tensor> dx, std::span<const char> need) override {
    if (need[0] == 0) return;
    g_.in[0] = g_.out[0] = dy.dim(0);
    dx[0] = Tensor::empty(g_.in);
    pad_backward(g_, dy.f32(), dx[0].f32());
  }

 private:
  PadGeometry g_;
};

class GatherLayer final : public Layer {
 public:
  GatherLayer(const Node& node, const Shape& in) : out_(node.output_shape), in_(in), axis_(batched_axis(node.attrs.axis, in)) {
    for (std::int64_t i : node.attrs.indices) indices_.push_back(normalized_axis(i, in[axis_ - 1]));
  }

  Result<Tensor> forward(std::span<const Tensor* const> in, const ForwardContext&) override {
    const Tensor& x = *in[0];
    Tensor y = Tensor::empty(batched(x.dim(0), out_), x.dtype());
    const AxisSplit s = split_at(x.shape(), axis_);
    gather_forward(x.data(), y.data(), s.outer, s.dim, s.inner, indices_);
    return y;
  }
  void backward(const Tensor& dy, std::span<Tensor> dx, std::span<const char> need) override {
    if (need[0] == 0) return;
    dx[0] = Tensor::empty(batched(dy.dim(0), in_));
    const AxisSplit s = split_at(dx[0].shape(), axis_);
    gather_backward(dy.f32(), dx[0].f32(), s.outer, s.dim, s.inner, indices_);
  }

 private:
  Shape out_, in_;
  std::size_t axis_;
  std::vector<i64> indices_;
};

// where: the condition (true unless the model file gives it) and, with one input, a constant
// operand (0 unless given) are buffers of the per-sample shapes, broadcast over the batch.
class WhereLayer final : public Layer {
 public:
  WhereLayer(const Graph& graph, const Node& node)
      : out_(node.output_shape), condition_(Tensor::empty(batched(1, node.attrs.condition))), first_(node.attrs.constant_first) {
    for (int input : node.inputs) in_.push_back(graph.shape_of(input));
    std::fill_n(condition_.f32(), condition_.numel(), 1.0f);
    if (const InitialValue* v = find_initial_value(node, "condition")) load_initial_value(*v, condition_);
    if (node.inputs.size() == 1) {
      constant_ = Tensor::zeros(batched(1, node.attrs.operand));
      if (const InitialValue* v = find_initial_value(node, "operand")) load_initial_value(*v, constant_);
    }
  }

  Result<Tensor> forward(std::span<const Tensor* const> in, const ForwardContext&) override {
    const i64 batch = in[0]->dim(0);
    plan(batch);
    Tensor y = Tensor::empty(g_.out);
    const float* x = in[0]->f32();
    const float* other = in.size() > 1 ? in[1]->f32() : constant_.f32();
    where_forward(g_, condition_.f32(), first_ ? other : x, first_ ? x : other, y.f32());
    return y;
  }
  void backward(const Tensor& dy, std::span<Tensor> dx, std::span<const char> need) override {
    const i64 batch = dy.dim(0);
    plan(batch);
    for (std::size_t k = 0; k < dx.size(); ++k) dx[k] = need[k] != 0 ? Tensor::empty(batched(batch, in_[k])) : Tensor();
    // The sides: a (the condition's "true") and b, each an input's gradient or nothing (the constant).
    Tensor none;
    Tensor& x = dx[0];
    Tensor& other = dx.size() > 1 ? dx[1] : none;
    Tensor& a = first_ ? other : x;
    Tensor& b = first_ ? x : other;
    where_backward(g_, condition_.f32(), dy.f32(), ptr(a), a.defined() ? a.numel() : 0, ptr(b), b.defined() ? b.numel() : 0);
  }

 private:
  void plan(i64 batch) {
    if (!g_.out.empty() && g_.out[0] == batch) return;
    g_.out = batched(batch, out_);
    g_.c_stride = broadcast_strides(condition_.shape(), g_.out);
    const Shape x = batched(batch, in_[0]);
    const Shape other = in_.size() > 1 ? batched(batch, in_[1]) : constant_.shape();
    g_.a_stride = broadcast_strides(first_ ? other : x, g_.out);
    g_.b_stride = broadcast_strides(first_ ? x : other, g_.out);
  }

  Shape out_;
  std::vector<Shape> in_;
  Tensor condition_, constant_;
  bool first_;
  WhereGeometry g_;
};

class EmbeddingLayer final : public Layer {
 public:
  EmbeddingLayer(const Graph& graph, const Node& node, std::span<ParameterSlot* const> p)
      : where_(graph.where(node)), out_(node.output_shape), num_(node.attrs.num_embeddings), d_(node.attrs.embedding_dim), w_(p[0]) {}

  Result<Tensor> forward(std::span<const Tensor* const> in, const ForwardContext& c) override {
    const Tensor& ids = *in[0];
    Tensor y = Tensor::empty(batched(ids.dim(0), out_));
    const i64 bad = embedding_forward(ids.i32(), value_of(w_), y.f32(), ids.numel(), num_, d_);
    if (bad >= 0) {
      const i64 tokens = ids.numel() / ids.dim(0);
      return Error{where_ + ": token id " + std::to_string(ids.i32()[bad]) + " at sample " + std::to_string(bad / tokens) + ", position " +
                   std::to_string(bad % tokens) + " is outside the vocabulary [0, " + std::to_string(num_) +
                   "); check the tokenizer against the model's num_embeddings"};
    }
    if (c.training) ids_ = ids;
    return y;
  }
  void backward(const Tensor& dy, std::span<Tensor>, std::span<const char>) override {
    embedding_backward(ids_.i32(), dy.f32(), gradient_of(w_), ids_.numel(), d_);
  }
  void release_saved() noexcept override { ids_ = Tensor(); }

 private:
  std::string where_;
  Shape out_;
  i64 num_, d_;
  ParameterSlot* w_;
  Tensor ids_;
};

class PosEmbeddingLayer final : public Layer {
 public:
  explicit PosEmbeddingLayer(std::span<ParameterSlot* const> p) : pos_(p[0]) {}

  Result<Tensor> forward(std::span<const Tensor* const> in, const ForwardContext&) override {
    const Tensor& x = *in[0];
    Tensor y = Tensor::empty(x.shape());
    pos_embedding_forward(x.f32(), value_of(pos_), y.f32(), x.dim(0), x.dim(1), x.dim(2));
    return y;
  }
  void backward(const Tensor& dy, std::span<Tensor> dx, std::span<const char> need) override {
    dx[0] = gradient_like(dy, need[0] != 0);
    pos_embedding_backward(dy.f32(), ptr(dx[0]), gradient_of(pos_), dy.dim(0), dy.dim(1), dy.dim(2));
  }

 private:
  ParameterSlot* pos_;
};

// Swin's relative position bias: the [heads, N, N] bias gathered from the table once per
// forward (a workspace, freed when the pass ends), then added to every window's scores. Nothing
// is kept for backward: dx = dy is passed on, as add's, and the table's gradient reads dy alone.
class RelPosBiasLayer final : public Layer {
 public:
  RelPosBiasLayer(const Node& node, const Shape& in, std::span<ParameterSlot* const> p)
      : wh_(node.attrs.window.h), ww_(node.attrs.window.w), bias_shape_(in.end() - 3, in.end()), table_(p[0]) {}

  Result<Tensor> forward(std::span<const Tensor* const> in, const ForwardContext&) override {
    const Tensor& x = *in[0];
    Tensor bias = Tensor::empty(bias_shape_);
    rel_pos_bias_gather(value_of(table_), bias.f32(), bias_shape_[0], wh_, ww_);
    Tensor y = Tensor::empty(x.shape());
    rel_pos_bias_forward(x.f32(), bias.f32(), y.f32(), x.numel() / bias.numel(), bias.numel());
    return y;
  }
  void backward(const Tensor& dy, std::span<Tensor> dx, std::span<const char> need) override {
    if (need[0] != 0) dx[0] = dy;
    float* dtable = gradient_of(table_);
    if (dtable == nullptr) return;
    Tensor dbias = Tensor::empty(bias_shape_);
    rel_pos_bias_backward(dy.f32(), dbias.f32(), dtable, dy.numel() / dbias.numel(), bias_shape_[0], wh_, ww_);
  }
  bool input_gradients_alias_dy() const noexcept override { return true; }

 private:
  i64 wh_, ww_;
  Shape bias_shape_;  // [heads, N, N]
  ParameterSlot* table_;
};

class ClsTokenLayer final : public Layer {
 public:
  ClsTokenLayer(const Node& node, const Shape& in, std::span<ParameterSlot* const> p) : out_(node.output_shape), in_(in), cls_(p[0]) {}

  Result<Tensor> forward(std::span<const Tensor* const> in, const ForwardContext&) override {
    const Tensor& x = *in[0];
    Tensor y = Tensor::empty(batched(x.dim(0), out_));
    cls_token_forward(x.f32(), value_of(cls_), y.f32(), x.dim(0), x.dim(1), x.dim(2));
    return y;
  }
  void backward(const Tensor& dy, std::span<Tensor> dx, std::span<const char> need) override {
    const i64 batch = dy.dim(0);
    dx[0] = need[0] != 0 ? Tensor::empty(batched(batch, in_)) : Tensor();
    cls_token_backward(dy.f32(), ptr(dx[0]), gradient_of(cls_), batch, in_[0], in_[1]);
  }

 private:
  Shape out_, in_;
  ParameterSlot* cls_;
};

class AttentionLayer final : public Layer {
 public:
  AttentionLayer(const Node& node, const Shape& in, std::span<ParameterSlot* const> p) {
    g_.tokens = in[0];
    g_.dim = in[1];
    g_.heads = node.attrs.heads;
    g_.causal = node.attrs.causal;
    const bool bias = node.attrs.bias;
    w_in_ = p[0];
    b_in_ = bias ? p[1] : nullptr;
    w_out_ = p[bias ? 2 : 1];
    b_out_ = bias ? p[3] : nullptr;
  }

  Result<Tensor> forward(std::span<const Tensor* const> in, const ForwardContext& c) override {
    const Tensor& x = *in[0];
    g_.batch = x.dim(0);
    Tensor y = Tensor::empty(x.shape());
    if (!c.training) {
      attention_forward(g_, x.f32(), value_of(w_in_), value_of(b_in_), value_of(w_out_), value_of(b_out_), y.f32(), nullptr);
      return y;
    }
    qkv_ = Tensor::empty({g_.batch, g_.tokens, 3 * g_.dim});
    probs_ = Tensor::empty({g_.batch, g_.heads, g_.tokens, g_.tokens});
    context_ = Tensor::empty({g_.batch, g_.tokens, g_.dim});
    const AttentionSaved saved{qkv_.f32(), probs_.f32(), context_.f32()};
    attention_forward(g_, x.f32(), value_of(w_in_), value_of(b_in_), value_of(w_out_), value_of(b_out_), y.f32(), &saved);
    x_ = x;
    return y;
  }
  void backward(const Tensor& dy, std::span<Tensor> dx, std::span<const char> need) override {
    g_.batch = x_.dim(0);
    dx[0] = gradient_like(x_, need[0] != 0);
    const AttentionSaved saved{qkv_.f32(), probs_.f32(), context_.f32()};
    attention_backward(g_, x_.f32(), value_of(w_in_), value_of(w_out_), saved, dy.f32(), ptr(dx[0]), gradient_of(w_in_), gradient_of(b_in_),
                       gradient_of(w_out_), gradient_of(b_out_));
  }
  void release_saved() noexcept override {
    x_ = Tensor();
    qkv_ = Tensor();
    probs_ = Tensor();
    context_ = Tensor();
  }

 private:
  AttentionGeometry g_;
  ParameterSlot* w_in_;
  ParameterSlot* b_in_;
  ParameterSlot* w_out_;
  ParameterSlot* b_out_;
  Tensor x_, qkv_, probs_, context_;
};

// lstm and gru: one layer of nn.LSTM / nn.GRU over [N, T, C] (src/nn/recurrent.cpp). Its
// training forward keeps the input, the output (every step's state) and the gates and cells
// the op's cost says (src/cost/op_cost.cpp); in inference those two are its workspace. Its
// optional inputs 1 and 2 are the initial states h0 and c0 (LSTM), [D, H] per sample.
class RecurrentLayer final : public Layer {
 public:
  RecurrentLayer(const hwprof::ops::RecurrentDefinition& def, const Node& node, const Shape& in, std::span<ParameterSlot* const> p) {
    g_.steps = in[0];
    g_.input = in[1];
    g_.hidden = node.attrs.hidden_size;
    g_.directions = node.attrs.bidirectional ? 2 : 1;
    g_.lstm = def.cell == hwprof::ops::RecurrentCell::lstm;
    w_ih_ = p[0];
    w_hh_ = p[1];
    b_ih_ = p.size() > 2 ? p[2] : nullptr;
    b_hh_ = p.size() > 3 ? p[3] : nullptr;
  }

  Result<Tensor> forward(std::span<const Tensor* const> in, const ForwardContext& c) override {
    const Tensor& x = *in[0];
    g_.batch = x.dim(0);
    const Tensor* h0 = in.size() > 1 ? in[1] : nullptr;
    const Tensor* c0 = in.size() > 2 ? in[2] : nullptr;
    const RecurrentStates initial{h0 != nullptr ? h0->f32() : nullptr, c0 != nullptr ? c0->f32() : nullptr};
    Tensor y = Tensor::empty({g_.batch, g_.steps, g_.directions * g_.hidden});
    Tensor gates = Tensor::empty({g_.batch, g_.steps, g_.directions * g_.gates() * g_.hidden});
    Tensor cells = Tensor::empty({g_.batch, g_.steps, g_.directions * g_.hidden});
    recurrent_forward(g_, x.f32(), value_of(w_ih_), value_of(w_hh_), value_of(b_ih_), value_of(b_hh_), y.f32(), {gates.f32(), cells.f32()}, initial);
    if (c.training) {
      x_ = x;
      if (h0 != nullptr) h0_ = *h0;
      if (c0 != nullptr) c0_ = *c0;
      y_ = y;
      gates_ = std::move(gates);
      cells_ = std::move(cells);
    }
    return y;
  }
  void backward(const Tensor& dy, std::span<Tensor> dx, std::span<const char> need) override {
    g_.batch = x_.dim(0);
    dx[0] = gradient_like(x_, need[0] != 0);
    const bool has_h0 = dx.size() > 1, has_c0 = dx.size() > 2;
    if (has_h0) dx[1] = gradient_like(h0_, need[1] != 0);
    if (has_c0) dx[2] = gradient_like(c0_, need[2] != 0);
    const RecurrentStates initial{has_h0 ? h0_.f32() : nullptr, has_c0 ? c0_.f32() : nullptr};
    const RecurrentStateGrads grads{has_h0 ? ptr(dx[1]) : nullptr, has_c0 ? ptr(dx[2]) : nullptr};
    recurrent_backward(g_, x_.f32(), y_.f32(), value_of(w_ih_), value_of(w_hh_), {gates_.f32(), cells_.f32()}, dy.f32(), ptr(dx[0]),
                       gradient_of(w_ih_), gradient_of(w_hh_), gradient_of(b_ih_), gradient_of(b_hh_), initial, grads);
  }
  void release_saved() noexcept override {
    x_ = Tensor();
    y_ = Tensor();
    gates_ = Tensor();
    cells_ = Tensor();
    h0_ = Tensor();
    c0_ = Tensor();
  }

 private:
  RecurrentGeometry g_;
  ParameterSlot* w_ih_;
  ParameterSlot* w_hh_;
  ParameterSlot* b_ih_;
  ParameterSlot* b_hh_;
  Tensor x_, y_, gates_, cells_, h0_, c0_;
};

}  // namespace

Shape batched(std::int64_t batch, const Shape& per_sample) {
  Shape full;
  full.reserve(per_sample.size() + 1);
  full.push_back(batch);
  full.insert(full.end(), per_sample.begin(), per_sample.end());
  return full;
}

// Long: one case per op, each its layer's construction; no default, so that the compiler names an
// op it lacks (docs/adding-an-op.md).
std::unique_ptr<Layer> make_layer(const Graph& graph, int layer, std::span<ParameterSlot* const> params) {
  const Node& node = graph.nodes[static_cast<std::size_t>(layer)];
  const Shape& in = graph.shape_of(node.inputs[0]);
  if (const hwprof::ops::UnaryForm* form = hwprof::ops::unary_form(node))
    return std::make_unique<ActivationLayer>(*form, hwprof::ops::unary_parameter(node));
  // An element-wise binary op: the kernels of its arithmetic, with an operand or between two
  // activations (a sum of two of one shape in place of one of them).
  if (const hwprof::ops::BinaryDefinition* binary = hwprof::ops::binary_definition(node.op)) {
    if (node.inputs.size() == 1) return std::make_unique<OperandLayer>(*binary, node, params);
    if (binary->arithmetic == BinaryOp::add && graph.shape_of(node.inputs[0]) == graph.shape_of(node.inputs[1])) return std::make_unique<AddLayer>();
    return std::make_unique<BinaryLayer>(binary->arithmetic);
  }
  // A normalization: the kernels of its statistics.
  if (const hwprof::ops::NormalizationDefinition* norm = hwprof::ops::normalization_definition(node.op)) {
    if (norm->statistics == hwprof::ops::NormStatistics::per_channel) return std::make_unique<BatchNormLayer>(node, in, params);
    return std::make_unique<LayerNormLayer>(node, in, params);
  }
  if (const hwprof::ops::PoolingDefinition* pool = hwprof::ops::pooling_definition(node.op)) {
    if (const PoolKernels* kernels = pool_kernels(*pool)) return std::make_unique<PoolLayer>(*pool, *kernels, node, in);
  }
  // A convolution: its GEMM lowering over the shapes' spatial axes, forward or as the data
  // gradient (transposed).
  if (const hwprof::ops::ConvolutionDefinition* conv = hwprof::ops::convolution_definition(node.op)) {
    if (conv->transposed) return std::make_unique<ConvTranspose2dLayer>(node, in, params);
    return std::make_unique<Conv2dLayer>(node, in, params);
  }
  // A recurrent op: the kernels of its cell.
  if (const hwprof::ops::RecurrentDefinition* recurrent = hwprof::ops::recurrent_definition(node.op))
    return std::make_unique<RecurrentLayer>(*recurrent, node, in, params);
  switch (node.op) {
    case OpKind::linear:
      return std::make_unique<LinearLayer>(node, in.back(), params);
      HWPROF_SOFTMAX_CASES
      return std::make_unique<SoftmaxLayer>(node, in);
    case OpKind::matmul:
      return std::make_unique<MatmulLayer>();
    case OpKind::upsample:
      return std::make_unique<UpsampleLayer>(node, in);
    case OpKind::reduce:
      return std::make_unique<ReduceLayer>(node, in);
    case OpKind::flatten:
    case OpKind::reshape:
      return std::make_unique<ViewLayer>(node, in);
    case OpKind::dropout:
      return std::make_unique<DropoutLayer>(node);
    case OpKind::concat:
      return std::make_unique<ConcatLayer>(graph, node);
    case OpKind::transpose:
      return std::make_unique<TransposeLayer>(node, in);
    case OpKind::select:
      return std::make_unique<SelectLayer>(node, in);
    case OpKind::slice:
    case OpKind::expand:
    case OpKind::tile:
      return std::make_unique<StridedCopyLayer>(node, in);
    case OpKind::pad:
      return std::make_unique<PadLayer>(node, in);
    case OpKind::gather:
      return std::make_unique<GatherLayer>(node, in);
    case OpKind::where:
      return std::make_unique<WhereLayer>(graph, node);
    case OpKind::embedding:
      return std::make_unique<EmbeddingLayer>(graph, node, params);
    case OpKind::pos_embedding:
      return std::make_unique<PosEmbeddingLayer>(params);
    case OpKind::rel_pos_bias:
      return std::make_unique<RelPosBiasLayer>(node, in, params);
    case OpKind::cls_token:
      return std::make_unique<ClsTokenLayer>(node, in, params);
    case OpKind::attention:
      return std::make_unique<AttentionLayer>(node, in, params);
    case OpKind::unsupported:
      break;  // Executor::build refuses such a graph first
      HWPROF_ELEMENTWISE_UNARY_CASES
      HWPROF_POOLING_CASES
      HWPROF_NORMALIZATION_CASES
      HWPROF_ELEMENTWISE_BINARY_CASES
      HWPROF_RECURRENT_CASES
      HWPROF_CONVOLUTION_CASES
      break;  // above, from their definitions (a pooling op without kernels: nullptr)
  }
  return nullptr;
}

}  // namespace hwprof::nn

namespace hwprof {

// The ops of ActivationLayer, AddLayer and BinaryLayer above, which honour
// ForwardContext::reusable_inputs (a broadcasting one only with an input of the output's shape).
bool may_run_in_place(OpKind op) noexcept {
  const ops::OpFamily family = ops::op_info(op).family;
  return family == ops::OpFamily::elementwise_unary || family == ops::OpFamily::elementwise_binary;
}

}  // namespace hwprof
