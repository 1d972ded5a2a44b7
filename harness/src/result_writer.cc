#include "dispatchlab/harness/result_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "dispatchlab/harness/files.h"
#include "dispatchlab/harness/fingerprint.h"

namespace dlab {

namespace fs = std::filesystem;

size_t ResultTable::column_index(const std::string& name) const {
  for (size_t i = 0; i < schema_->columns.size(); ++i)
    if (name == schema_->columns[i].name) return i;
  throw std::invalid_argument(fmt::format("table {} has no column '{}'", schema_->name, name));
}

void ResultTable::add(const std::map<std::string, std::string>& row) {
  std::vector<std::string> r(schema_->columns.size());
  for (const auto& [k, v] : row) r[column_index(k)] = v;
  rows_.push_back(std::move(r));
}

void ResultTable::append(const ResultTable& other) {
  if (other.schema_ != schema_) throw std::invalid_argument("appending a table of another schema");
  rows_.insert(rows_.end(), other.rows_.begin(), other.rows_.end());
}

const std::string& ResultTable::at(size_t row, const std::string& column) const {
  return rows_.at(row).at(column_index(column));
}

namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

}  // namespace

std::vector<std::vector<std::string>> parse_csv_records(const std::string& text) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> rec;
  std::string field;
  bool quoted = false, any = false;
  // A byte-order mark (spreadsheets write one) is not part of the first column's name.
  const size_t start = text.starts_with("\xEF\xBB\xBF") ? 3 : 0;
  for (size_t i = start; i < text.size(); ++i) {
    char c = text[i];
    any = true;
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rec.push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      rec.push_back(std::move(field));
      field.clear();
      records.push_back(std::move(rec));
      rec.clear();
      any = false;
    } else if (c != '\r') {
      field += c;
    }
  }
  if (quoted) throw std::invalid_argument("CSV ends inside a quoted field");
  if (any) {
    rec.push_back(std::move(field));
    records.push_back(std::move(rec));
  }
  return records;
}

std::string ResultTable::to_csv() const {
  std::string s;
  for (size_t i = 0; i < schema_->columns.size(); ++i) s += (i ? "," : "") + std::string(schema_->columns[i].name);
  s += "\n";
  for (const auto& r : rows_) {
    for (size_t i = 0; i < r.size(); ++i) s += (i ? "," : "") + csv_field(r[i]);
    s += "\n";
  }
  return s;
}

ResultTable ResultTable::from_csv(const TableSchema& schema, const std::string& text) {
  auto records = parse_csv_records(text);
  if (records.empty()) throw std::invalid_argument(fmt::format("{}.csv: no header", schema.name));
  const auto& header = records.front();
  bool same = header.size() == schema.columns.size();
  for (size_t i = 0; same && i < header.size(); ++i) same = header[i] == schema.columns[i].name;
  if (!same) throw std::invalid_argument(fmt::format("{}.csv: header does not match the schema", schema.name));
  ResultTable t(schema);
  for (size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() != header.size())
      throw std::invalid_argument(fmt::format("{}.csv: record {} has {} fields, expected {}", schema.name, r, records[r].size(), header.size()));
    t.rows_.push_back(records[r]);
  }
  return t;
}

namespace {

std::string errno_text(int err) { return std::strerror(err); }

fs::path temporary_for(const fs::path& path) {
  return path.parent_path() / fmt::format(".{}.tmp.{}", path.filename().string(), getpid());
}

void refuse_existing(const fs::path& path) {
  if (fs::exists(path)) throw std::runtime_error(fmt::format("{} exists; results are never overwritten (start a new run)", path.string()));
}

}  // namespace

void write_file_atomically(const fs::path& path, const std::string& content) {
  write_files_atomically(path.parent_path(), {{path.filename().string(), content}});
}

void replace_file_atomically(const fs::path& path, const std::string& content) {
  // The output rule of files.h: never a link's target or a device replaced.
  write_output_file(path.string(), content, ExistingFile::kReplace);
}

void write_files_atomically(const fs::path& dir, const std::vector<std::pair<std::string, std::string>>& files) {
  for (const auto& [name, content] : files) refuse_existing(dir / name);
  std::vector<fs::path> temps;
  auto remove_all = [](const std::vector<fs::path>& paths) {
    std::error_code ec;
    for (const auto& p : paths) fs::remove(p, ec);
  };
  try {
    for (const auto& [name, content] : files) {
      temps.push_back(temporary_for(dir / name));
      write_new_file(temps.back().string(), content);
    }
  } catch (...) {
    remove_all(temps);
    throw;
  }
  // link(2), not rename(2): link fails if the target appeared meanwhile, so a concurrent writer can
  // never replace a finished file. The set is linked in the order given (sidecars last), and a
  // failure unlinks what this call linked: the set appears whole or not at all.
  std::vector<fs::path> linked;
  for (size_t i = 0; i < files.size(); ++i) {
    fs::path target = dir / files[i].first;
    if (::link(temps[i].c_str(), target.c_str()) != 0) {
      int err = errno;
      remove_all(linked);
      remove_all(temps);
      throw std::runtime_error(fmt::format("cannot create {}: {}", target.string(), errno_text(err)));
    }
    linked.push_back(target);
  }
  remove_all(temps);
}

RunDirectory RunDirectory::create(const fs::path& root, const std::string& cpu_slug, const std::string& git_commit,
                                  std::chrono::system_clock::time_point when, const std::string& machine_json) {
  if (root.empty()) throw std::runtime_error("the results root is empty: give a directory (or --no-save to write nothing)");
  std::time_t t = std::chrono::system_clock::to_time_t(when);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  std::string commit = commit_for_run_name(git_commit);
  fs::path parent = root / cpu_slug;
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot create {}: {}", parent.string(), ec.message()));
  // Staged under a hidden name with its fingerprint, then renamed into place.
  fs::path staging = parent / fmt::format(".staging-{}-{}", stamp, getpid());
  if (::mkdir(staging.c_str(), 0755) != 0)
    throw std::runtime_error(fmt::format("cannot create {}: {}", staging.string(), errno_text(errno)));
  try {
    write_new_file((staging / "machine.json").string(), machine_json);
  } catch (...) {
    fs::remove_all(staging, ec);
    throw;
  }
  std::string base = fmt::format("{}-{}", stamp, commit);
  for (int i = 1;; ++i) {
    fs::path p = parent / (i == 1 ? base : fmt::format("{}-{}", base, i));
    // rename(2) of a directory onto an existing non-empty one fails: the atomic claim of the name.
    // (Every run directory holds machine.json, so none is empty.)
    if (fs::exists(p)) continue;
    if (::rename(staging.c_str(), p.c_str()) == 0) {
      RunDirectory d;
      d.path_ = p;
      return d;
    }
    if (errno == EEXIST || errno == ENOTEMPTY) continue;  // another run took the name meanwhile
    int err = errno;
    fs::remove_all(staging, ec);
    throw std::runtime_error(fmt::format("cannot create {}: {}", p.string(), errno_text(err)));
  }
}

RunDirectory RunDirectory::open(const fs::path& dir) {
  if (!fs::is_directory(dir)) throw std::runtime_error(fmt::format("{} is not a run directory", dir.string()));
  RunDirectory d;
  d.path_ = dir;
  return d;
}

void RunDirectory::write(const std::string& file_name, const std::string& content) const {
  write_file_atomically(path_ / file_name, content);
}

void RunDirectory::check_can_write(const std::vector<std::string>& file_names) const {
  for (const auto& n : file_names) refuse_existing(path_ / n);
  if (::access(path_.c_str(), W_OK) != 0)
    throw std::runtime_error(fmt::format("cannot write into {}: {}", path_.string(), errno_text(errno)));
}

}  // namespace dlab
