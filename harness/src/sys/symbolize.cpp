// Symbolisation of heap frames with libdwfl (see symbolize.h); the process
// that names a run's frames is symbolize_run.cpp's.
#include "sys/symbolize.h"

#include <cxxabi.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <map>
#include <memory>

#include "core/escape.h"

namespace mh {

namespace {

// The symbol's name demangled, without its version (malloc@@GLIBC_2.2.5).
std::string demangled(const char* symbol) {
  const std::string name(symbol, std::strcspn(symbol, "@"));
  int status = 0;
  char* d = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !d) return name;
  std::string out(d);
  std::free(d);
  return out;
}

bool has_symtab(Elf* elf) {
  for (Elf_Scn* scn = elf ? elf_nextscn(elf, nullptr) : nullptr; scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB) return true;
  }
  return false;
}

// What identifies a file's content well enough to reopen it when it changed.
struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  timespec mtime{};
  bool operator==(const FileId& o) const {
    return dev == o.dev && ino == o.ino && size == o.size && mtime.tv_sec == o.mtime.tv_sec &&
           mtime.tv_nsec == o.mtime.tv_nsec;
  }
};

// One object file opened with libdwfl at load address 0. Its debug
// information is looked for where elfutils looks (beside it, /usr/lib/debug)
// and only when a frame needs it.
class ObjectFile {
 public:
  ObjectFile(const std::string& path, const FileId& id);
  ~ObjectFile() {
    if (dwfl_) dwfl_end(dwfl_);
  }
  ObjectFile(const ObjectFile&) = delete;
  ObjectFile& operator=(const ObjectFile&) = delete;
  void fill(HeapFrame& f);
  const HeapObject& info() const { return info_; }
  const FileId& id() const { return id_; }

 private:
  bool open(const std::string& path);
  std::optional<GElf_Addr> address_of(uint64_t file_offset) const;
  const char* symbols_from();
  FileId id_;
  HeapObject info_;
  Dwfl* dwfl_ = nullptr;
  Dwfl_Module* mod_ = nullptr;
  GElf_Addr bias_ = 0;
  std::vector<GElf_Phdr> loads_;
  const char* symbols_ = nullptr;  // "symtab" or "dynsym", once known
};

char* no_debuginfo_path = nullptr;
const Dwfl_Callbacks kCallbacks = {dwfl_build_id_find_elf, dwfl_standard_find_debuginfo,
                                   dwfl_offline_section_address, &no_debuginfo_path};

ObjectFile::ObjectFile(const std::string& path, const FileId& id) : id_(id) {
  if (!open(path) && info_.reason.empty()) info_.reason = std::string("libdwfl: ") + dwfl_errmsg(-1);
}

// The object as a regular file, or -1 with the reason: opened without
// blocking (a FIFO the program left at the path would hold the open until
// someone writes to it) and checked before anything reads it.
int open_regular(const std::string& path, std::string& why_not) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    why_not = std::string("cannot open it: ") + std::strerror(errno);
    return -1;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    why_not = "it is not a regular file";
    return -1;
  }
  return fd;
}

bool ObjectFile::open(const std::string& path) {
  const int fd = open_regular(path, info_.reason);
  if (fd < 0) return false;
  dwfl_ = dwfl_begin(&kCallbacks);
  if (!dwfl_) {
    ::close(fd);
    return false;
  }
  dwfl_report_begin(dwfl_);
  // libdwfl reads the descriptor checked above (and closes it), never the path again.
  mod_ = dwfl_report_elf(dwfl_, path.c_str(), path.c_str(), fd, 0, false);
  dwfl_report_end(dwfl_, nullptr, nullptr);
  if (!mod_) {
    ::close(fd);  // consumed only on success
    return false;
  }
  Elf* elf = dwfl_module_getelf(mod_, &bias_);
  size_t n = 0;
  if (!elf || elf_getphdrnum(elf, &n) != 0) return false;
  for (size_t i = 0; i < n; ++i) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf, int(i), &ph) && ph.p_type == PT_LOAD) loads_.push_back(ph);
  }
  const unsigned char* bits = nullptr;
  GElf_Addr at = 0;
  const int len = dwfl_module_build_id(mod_, &bits, &at);
  if (len > 0) {
    std::string hex;
    for (int i = 0; i < len; ++i) hex += fmt::format("{:02x}", bits[i]);
    info_.build_id = hex;
  } else {
    info_.reason = "it has no GNU build ID note";
  }
  return true;
}

// A file offset (what the ledger's frames are: the address minus the file's
// load base) to the address in the module: through the segment that maps it.
std::optional<GElf_Addr> ObjectFile::address_of(uint64_t file_offset) const {
  for (const auto& ph : loads_)
    if (file_offset >= ph.p_offset && file_offset < ph.p_offset + ph.p_filesz)
      return file_offset - ph.p_offset + ph.p_vaddr + bias_;
  return std::nullopt;
}

// Where dwfl's names come from: the object's .symtab or its debug file's when
// either exists, else its .dynsym (a stripped library names only its exports).
const char* ObjectFile::symbols_from() {
  if (symbols_) return symbols_;
  GElf_Addr bias = 0;
  Dwarf* dw = dwfl_module_getdwarf(mod_, &bias);
  symbols_ = has_symtab(dwfl_module_getelf(mod_, &bias)) || (dw && has_symtab(dwarf_getelf(dw))) ? "symtab" : "dynsym";
  return symbols_;
}

void ObjectFile::fill(HeapFrame& f) {
  f.source = "none";
  if (!mod_ || loads_.empty()) {
    f.reason = info_.reason;
    return;
  }
  const auto addr = address_of(f.offset > 0 ? f.offset - 1 : 0);
  if (!addr) {
    f.reason = fmt::format("offset {:#x} is in no loadable segment of the file (a different build?)", f.offset);
    return;
  }
  GElf_Off off = 0;
  GElf_Sym sym;
  if (const char* name = dwfl_module_addrinfo(mod_, *addr, &off, &sym, nullptr, nullptr, nullptr)) {
    f.function = escape::shown(demangled(name));  // names from the program's own files
    f.source = symbols_from();
  }
  if (Dwfl_Line* line = dwfl_module_getsrc(mod_, *addr)) {
    int lineno = 0;
    const char* file = dwfl_lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr);
    if (file && lineno > 0) {
      f.file = escape::shown(file);
      f.line = lineno;
      f.source = "dwarf";
    }
  }
  if (f.source == "none") f.reason = "no symbol of the file covers this offset (stripped)";
}

std::optional<FileId> file_id(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileId{st.st_dev, st.st_ino, st.st_size, st.st_mtim};
}

// The open objects by path: a file whose identity changed is opened again; one
// that cannot be found keeps the reason.
ObjectFile& object_file(const std::string& path) {
  static std::map<std::string, std::unique_ptr<ObjectFile>> open_files;
  const FileId id = file_id(path).value_or(FileId{});
  auto& slot = open_files[path];
  if (!slot || !(slot->id() == id)) slot = std::make_unique<ObjectFile>(path, id);
  return *slot;
}

}  // namespace

void symbolize_frame(HeapFrame& frame) {
  frame.function.clear();
  frame.file.clear();
  frame.line = 0;
  frame.reason.clear();
  // The frame names its object as the record keeps paths (escape::identity).
  if (is_object_file(frame.object)) return object_file(escape::from_identity(frame.object)).fill(frame);
  frame.source = "none";
  frame.reason = "the address is in no file mapping (" + frame.object + ")";
}

HeapObject heap_object(const std::string& path) {
  if (!is_object_file(path)) return HeapObject{std::nullopt, "not a file"};
  return object_file(escape::from_identity(path)).info();
}

}  // namespace mh
