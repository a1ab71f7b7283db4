#include "worker/vendor/cudnn_backend.h"

#include <dlfcn.h>

#include <fmt/format.h>

#include "util/paths.h"

namespace ptxforge::gpu::cudnn {

struct Api {
  size_t (*get_version)() = nullptr;
  int (*create_handle)(void**) = nullptr;
  int (*destroy_handle)(void*) = nullptr;
  const char* (*error_string)(int) = nullptr;
  void (*last_error)(char*, size_t) = nullptr;  // cuDNN 9; absent before
  int (*create)(int type, void** desc) = nullptr;
  int (*destroy)(void* desc) = nullptr;
  int (*set)(void* desc, int attr, int type, int64_t count, const void* values) = nullptr;
  int (*get)(void* desc, int attr, int type, int64_t requested, int64_t* count, void* values) = nullptr;
  int (*finalize)(void* desc) = nullptr;
  int (*execute)(void* handle, void* plan, void* variant_pack) = nullptr;
};

Descriptor& Descriptor::operator=(Descriptor&& o) noexcept {
  if (this != &o) {
    if (raw_) api_->destroy(raw_);
    api_ = o.api_;
    raw_ = o.raw_;
    o.raw_ = nullptr;
  }
  return *this;
}

Descriptor::~Descriptor() {
  if (raw_) api_->destroy(raw_);
}

Result<std::unique_ptr<Library>> Library::load() {
  void* h = open_cuda_library("libcudnn.so.9");
  if (!h) h = open_cuda_library("libcudnn.so");
  if (!h)
    return Error{
        fmt::format("cuDNN not found (looked for libcudnn.so.9 in {}/lib64 and the library path)", cuda_home())};
  auto api = std::make_unique<Api>();
  std::string missing;
  auto symbol = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
    if (!fn && missing.empty()) missing = name;
  };
  symbol(api->get_version, "cudnnGetVersion");
  symbol(api->create_handle, "cudnnCreate");
  symbol(api->destroy_handle, "cudnnDestroy");
  symbol(api->error_string, "cudnnGetErrorString");
  symbol(api->create, "cudnnBackendCreateDescriptor");
  symbol(api->destroy, "cudnnBackendDestroyDescriptor");
  symbol(api->set, "cudnnBackendSetAttribute");
  symbol(api->get, "cudnnBackendGetAttribute");
  symbol(api->finalize, "cudnnBackendFinalize");
  symbol(api->execute, "cudnnBackendExecute");
  if (!missing.empty()) return Error{fmt::format("cuDNN lacks {} (cuDNN 9 or later is needed)", missing)};
  api->last_error = reinterpret_cast<decltype(api->last_error)>(dlsym(h, "cudnnGetLastErrorString"));  // optional
  if (size_t v = api->get_version(); v < 90000)
    return Error{fmt::format("cuDNN {} is too old: its fused attention graph needs cuDNN 9 (90000 or later)", v)};
  std::unique_ptr<Library> lib(new Library(std::move(api)));
  if (int rc = lib->api_->create_handle(&lib->handle_); rc != 0) {
    lib->handle_ = nullptr;
    return Error{fmt::format("cudnnCreate failed: {}", lib->describe(rc))};
  }
  return lib;
}

Library::Library(std::unique_ptr<Api> api) : api_(std::move(api)) {}

Library::~Library() {
  if (handle_) api_->destroy_handle(handle_);
}

size_t Library::version() const { return api_->get_version(); }

std::string Library::describe(int status) const {
  std::string out = fmt::format("{} ({})", api_->error_string(status), status);
  if (api_->last_error) {
    char message[1024] = {};
    api_->last_error(message, sizeof message);
    if (message[0]) out += fmt::format(": {}", message);
  }
  return out;
}

Result<Descriptor> Library::create(DescType t) const {
  void* raw = nullptr;
  if (int rc = api_->create(static_cast<int>(t), &raw); rc != 0)
    return Error{fmt::format("cudnnBackendCreateDescriptor({}) failed: {}", static_cast<int>(t), describe(rc))};
  return Descriptor(api_.get(), raw);
}

Status Library::set(const Descriptor& d, Attr a, AttrType t, int64_t count, const void* values,
                    const char* what) const {
  if (int rc = api_->set(d.raw(), static_cast<int>(a), static_cast<int>(t), count, values); rc != 0)
    return Error{fmt::format("cuDNN: setting {} (attribute {}) failed: {}", what, static_cast<int>(a), describe(rc))};
  return ok_status();
}

Status Library::get(const Descriptor& d, Attr a, AttrType t, int64_t requested, int64_t* count, void* values,
                    const char* what) const {
  if (int rc = api_->get(d.raw(), static_cast<int>(a), static_cast<int>(t), requested, count, values); rc != 0)
    return Error{fmt::format("cuDNN: reading {} (attribute {}) failed: {}", what, static_cast<int>(a), describe(rc))};
  return ok_status();
}

Status Library::finalize(const Descriptor& d, const char* what) const {
  if (int rc = api_->finalize(d.raw()); rc != 0)
    return Error{fmt::format("cuDNN: finalizing {} failed: {}", what, describe(rc))};
  return ok_status();
}

Status Library::execute(const Descriptor& plan, const Descriptor& variant_pack) const {
  if (int rc = api_->execute(handle_, plan.raw(), variant_pack.raw()); rc != 0)
    return Error{fmt::format("cudnnBackendExecute failed: {}", describe(rc))};
  return ok_status();
}

}  // namespace ptxforge::gpu::cudnn
