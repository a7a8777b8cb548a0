// Dynamic symbol lookup in an ELF file (see elf_symbols.h).
#include "sys/elf_symbols.h"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace mh {

std::optional<uint64_t> dynamic_symbol_value(const std::string& path, const std::string& name, std::string& why_not) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    why_not = std::string("cannot open it: ") + std::strerror(errno);
    return false;
  }
  auto read_at = [&](void* buf, size_t len, off_t off) { return pread(fd, buf, len, off) == ssize_t(len); };
  auto fail = [&](const std::string& why) -> std::optional<uint64_t> {
    ::close(fd);
    why_not = why;
    return std::nullopt;
  };
  Elf64_Ehdr h{};
  if (!read_at(&h, sizeof h, 0) || std::memcmp(h.e_ident, ELFMAG, SELFMAG) != 0 || h.e_ident[EI_CLASS] != ELFCLASS64)
    return fail("it is not a 64-bit ELF file");
  std::vector<Elf64_Shdr> sections(h.e_shnum);
  if (h.e_shentsize != sizeof(Elf64_Shdr) ||
      !read_at(sections.data(), sections.size() * sizeof(Elf64_Shdr), static_cast<off_t>(h.e_shoff)))
    return fail("its section headers cannot be read");
  for (const auto& s : sections) {
    if (s.sh_type != SHT_DYNSYM || s.sh_link >= sections.size() || s.sh_entsize != sizeof(Elf64_Sym)) continue;
    const Elf64_Shdr& strtab = sections[s.sh_link];
    std::vector<char> names(strtab.sh_size + 1, '\0');
    std::vector<Elf64_Sym> syms(s.sh_size / sizeof(Elf64_Sym));
    if (!read_at(names.data(), strtab.sh_size, static_cast<off_t>(strtab.sh_offset)) ||
        !read_at(syms.data(), syms.size() * sizeof(Elf64_Sym), static_cast<off_t>(s.sh_offset)))
      return fail("its dynamic symbols cannot be read");
    for (const auto& sym : syms)
      if (sym.st_name < strtab.sh_size && sym.st_shndx != SHN_UNDEF && name == &names[sym.st_name]) {
        ::close(fd);
        return sym.st_value;
      }
  }
  return fail("it does not define " + name);
}

bool defines_dynamic_symbol(const std::string& path, const std::string& name, std::string& why_not) {
  return dynamic_symbol_value(path, name, why_not).has_value();
}

}  // namespace mh
