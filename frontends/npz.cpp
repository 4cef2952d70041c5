// .npz read and write (frontends/npz.h): the zip container (local headers,
// central directory, zip64 sizes), the .npy header (format 1.0 to 3.0), and
// zlib for deflated members and CRC-32.
#include "frontends/npz.h"

#include "ir/io.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <zlib.h>

#include <cstring>
#include <optional>

namespace refinery::frontends {
namespace {

uint64_t le(const std::string& s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + static_cast<size_t>(i)]);
  return v;
}

void put(std::string& s, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

struct NpyType {
  const char* descr;
  ir::DType dtype;
};
constexpr NpyType kTypes[] = {
    {"<f8", ir::DType::f64}, {"<f4", ir::DType::f32}, {"<f2", ir::DType::f16}, {"<i8", ir::DType::i64},
    {"<i4", ir::DType::i32}, {"<i2", ir::DType::i16}, {"|i1", ir::DType::i8},  {"|u1", ir::DType::u8},
    {"<u2", ir::DType::u16}, {"<u4", ir::DType::u32}, {"<u8", ir::DType::u64}, {"|b1", ir::DType::boolean},
};

// The value of 'key' in the header dict text, up to the next ',' or '}' at depth 0.
std::optional<std::string> field(const std::string& h, const std::string& key) {
  size_t k = h.find("'" + key + "'");
  if (k == std::string::npos) return std::nullopt;
  size_t c = h.find(':', k);
  if (c == std::string::npos) return std::nullopt;
  size_t i = c + 1, depth = 0;
  std::string v;
  for (; i < h.size(); ++i) {
    char ch = h[i];
    if (ch == '(') ++depth;
    if (ch == ')') --depth;
    if (depth == 0 && (ch == ',' || ch == '}')) break;
    v.push_back(ch);
  }
  size_t a = v.find_first_not_of(" "), b = v.find_last_not_of(" ");
  return a == std::string::npos ? std::string{} : v.substr(a, b - a + 1);
}

Expected<ir::Tensor> parse_npy(const std::string& npy, const std::string& where) {
  if (npy.size() < 10 || npy.compare(0, 6, "\x93NUMPY") != 0) return fail("is not a .npy array", where);
  int major = static_cast<unsigned char>(npy[6]);
  size_t hlen_bytes = major == 1 ? 2 : 4;
  if (major < 1 || major > 3) return fail(fmt::format(".npy format {} is not supported", major), where);
  size_t hlen = le(npy, 8, static_cast<int>(hlen_bytes)), start = 8 + hlen_bytes;
  if (start + hlen > npy.size()) return fail("its .npy header runs past the data", where);
  std::string h = npy.substr(start, hlen);
  auto descr = field(h, "descr"), fortran = field(h, "fortran_order"), shape = field(h, "shape");
  if (!descr || !fortran || !shape) return fail("its .npy header lacks descr, fortran_order or shape", where);
  std::string d = descr->size() >= 2 ? descr->substr(1, descr->size() - 2) : *descr;
  if (d.size() == 3 && d[0] == '=') d[0] = '<';
  if (d == "<b1" || d == "<u1" || d == "<i1") d[0] = '|';
  const NpyType* type = nullptr;
  for (const auto& t : kTypes)
    if (d == t.descr) type = &t;
  if (!type) return fail(fmt::format("dtype '{}' is not supported (little-endian numbers or bool)", d), where);
  if (*fortran != "False") return fail("is in Fortran order (write it C-contiguous)", where);
  std::vector<int64_t> dims;
  std::string digits;
  for (char ch : *shape) {
    if (std::isdigit(static_cast<unsigned char>(ch))) {
      digits.push_back(ch);
    } else if (!digits.empty()) {
      dims.push_back(std::stoll(digits));
      digits.clear();
    }
  }
  size_t numel = 1;
  for (int64_t x : dims) numel *= static_cast<size_t>(x);
  size_t bytes = numel * ir::dtype_size(type->dtype), at = start + hlen;
  if (npy.size() - at != bytes)
    return fail(fmt::format("holds {} bytes of data, its shape ({}) needs {}", npy.size() - at, *shape, bytes), where);
  std::vector<std::byte> data(bytes);
  if (bytes) std::memcpy(data.data(), npy.data() + at, bytes);
  return ir::Tensor(type->dtype, std::move(dims), std::move(data));
}

std::string npy_bytes(const ir::Tensor& t) {
  const char* descr = nullptr;
  for (const auto& k : kTypes)
    if (k.dtype == t.dtype()) descr = k.descr;
  std::string shape = t.dims().size() == 1 ? fmt::format("({},)", t.dims()[0])
                                            : fmt::format("({})", fmt::join(t.dims(), ", "));
  std::string h = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr ? descr : "<f8", shape);
  size_t total = 10 + h.size() + 1;
  h.append((64 - total % 64) % 64, ' ');
  h.push_back('\n');
  std::string out("\x93NUMPY\x01\x00", 8);
  put(out, h.size(), 2);
  out += h;
  out.append(reinterpret_cast<const char*>(t.data()), t.bytes().size());
  return out;
}

}  // namespace

Expected<NamedTensors> read_npz(const std::filesystem::path& file) {
  const std::string path = file.string();
  auto read = ir::read_file(file);
  if (!read) return std::unexpected(read.error());
  const std::string& z = *read;
  // The end-of-central-directory record, in the last 64 KiB + 22 bytes.
  size_t eocd = std::string::npos;
  for (size_t i = z.size() >= 22 ? z.size() - 22 + 1 : 0; i-- > 0 && z.size() - i <= 65557;)
    if (z.compare(i, 4, "PK\x05\x06") == 0) {
      eocd = i;
      break;
    }
  if (eocd == std::string::npos) return fail("not an .npz file (no zip directory)", {}, path);
  uint64_t count = le(z, eocd + 10, 2), dir = le(z, eocd + 16, 4);
  if (dir == 0xffffffff || count == 0xffff) {  // zip64: the locator sits just before
    if (eocd < 20 || z.compare(eocd - 20, 4, "PK\x06\x07") != 0) return fail("broken zip64 directory", {}, path);
    uint64_t rec = le(z, eocd - 20 + 8, 8);
    if (rec + 56 > z.size() || z.compare(rec, 4, "PK\x06\x06") != 0) return fail("broken zip64 directory", {}, path);
    count = le(z, rec + 32, 8);
    dir = le(z, rec + 48, 8);
  }
  NamedTensors out;
  size_t at = dir;
  for (uint64_t e = 0; e < count; ++e) {
    if (at + 46 > z.size() || z.compare(at, 4, "PK\x01\x02") != 0) return fail("broken zip directory", {}, path);
    uint64_t method = le(z, at + 10, 2), csize = le(z, at + 20, 4), usize = le(z, at + 24, 4);
    uint64_t nlen = le(z, at + 28, 2), xlen = le(z, at + 30, 2), clen = le(z, at + 32, 2), local = le(z, at + 42, 4);
    if (at + 46 + nlen + xlen > z.size()) return fail("broken zip directory", {}, path);
    std::string name = z.substr(at + 46, nlen);
    for (size_t x = at + 46 + nlen; x + 4 <= at + 46 + nlen + xlen;) {  // zip64 extra: the sizes that overflowed
      uint64_t id = le(z, x, 2), len = le(z, x + 2, 2);
      if (id == 1) {
        size_t p = x + 4;
        if (usize == 0xffffffff) usize = le(z, p, 8), p += 8;
        if (csize == 0xffffffff) csize = le(z, p, 8), p += 8;
        if (local == 0xffffffff) local = le(z, p, 8);
      }
      x += 4 + len;
    }
    at += 46 + nlen + xlen + clen;
    std::string where = fmt::format("member '{}'", name);
    if (local + 30 > z.size() || z.compare(local, 4, "PK\x03\x04") != 0)
      return fail("broken local header", where, path);
    size_t data = local + 30 + le(z, local + 26, 2) + le(z, local + 28, 2);
    if (data + csize > z.size()) return fail("runs past the end of the file", where, path);
    std::string npy;
    if (method == 0) {
      npy = z.substr(data, csize);
    } else if (method == 8) {
      npy.resize(usize);
      z_stream s{};
      s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(z.data() + data));
      s.avail_in = static_cast<uInt>(csize);
      s.next_out = reinterpret_cast<Bytef*>(npy.data());
      s.avail_out = static_cast<uInt>(usize);
      if (inflateInit2(&s, -MAX_WBITS) != Z_OK) return fail("zlib failed", where, path);
      int rc = inflate(&s, Z_FINISH);
      inflateEnd(&s);
      if (rc != Z_STREAM_END || s.total_out != usize) return fail("its deflated data is corrupt", where, path);
    } else {
      return fail(fmt::format("compression method {} is not supported (stored or deflate)", method), where, path);
    }
    auto t = parse_npy(npy, where);
    if (!t) return fail(t.error().message, where, path);
    if (name.ends_with(".npy")) name.resize(name.size() - 4);
    out.emplace_back(std::move(name), std::move(*t));
  }
  return out;
}

Expected<void> write_npz(const std::filesystem::path& file, const NamedTensors& arrays) {
  std::string z, dir;
  for (const auto& [name, t] : arrays) {
    std::string member = name + ".npy", npy = npy_bytes(t);
    uint64_t crc = crc32(0L, reinterpret_cast<const Bytef*>(npy.data()), static_cast<uInt>(npy.size()));
    uint64_t offset = z.size();
    bool big = npy.size() >= 0xffffffffu || offset >= 0xffffffffu;
    if (big) return fail(fmt::format("array '{}' is too large for this writer (4 GiB)", name), {}, file.string());
    std::string common;
    put(common, 20, 2);  // version needed
    put(common, 0, 2);   // flags
    put(common, 0, 2);   // stored
    put(common, 0, 2);   // time
    put(common, 0x21, 2);  // date: 1980-01-01
    put(common, crc, 4);
    put(common, npy.size(), 4);
    put(common, npy.size(), 4);
    put(common, member.size(), 2);
    put(common, 0, 2);  // extra
    z += std::string("PK\x03\x04", 4) + common + member + npy;
    dir += std::string("PK\x01\x02", 4);
    put(dir, 20, 2);  // made by
    dir += common;
    put(dir, 0, 2);  // comment
    put(dir, 0, 2);  // disk
    put(dir, 0, 2);  // internal attributes
    put(dir, 0, 4);  // external attributes
    put(dir, offset, 4);
    dir += member;
  }
  uint64_t dir_at = z.size();
  z += dir;
  z += std::string("PK\x05\x06", 4);
  put(z, 0, 2);
  put(z, 0, 2);
  put(z, arrays.size(), 2);
  put(z, arrays.size(), 2);
  put(z, dir.size(), 4);
  put(z, dir_at, 4);
  put(z, 0, 2);
  return ir::write_files_atomic({{file, z}});
}

}  // namespace refinery::frontends
