// Result files: CSV tables of the schema in result_schema.h, JSON sidecars, and run directories
// results/<cpu>/<UTC timestamp>-<commit>/ that are never reused or overwritten. Every file is
// written to a temporary name in the same directory and renamed, so a reader never sees half a file.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "dispatchlab/harness/result_schema.h"

namespace dlab {

// RFC 4180 records: quoted fields may hold commas, doubled quotes and newlines. A leading UTF-8
// byte-order mark is skipped.
std::vector<std::vector<std::string>> parse_csv_records(const std::string& text);

class ResultTable {
 public:
  explicit ResultTable(const TableSchema& schema) : schema_(&schema) {}
  // Throws std::invalid_argument on a column the schema does not have; absent columns stay empty.
  void add(const std::map<std::string, std::string>& row);
  const TableSchema& schema() const { return *schema_; }
  size_t size() const { return rows_.size(); }
  const std::string& at(size_t row, const std::string& column) const;
  // Appends the rows of a table of the same schema.
  void append(const ResultTable& other);

  std::string to_csv() const;
  // Throws std::invalid_argument when the header is not exactly the schema's columns.
  static ResultTable from_csv(const TableSchema& schema, const std::string& text);

 private:
  size_t column_index(const std::string& name) const;
  const TableSchema* schema_;
  std::vector<std::vector<std::string>> rows_;
};

// Writes `content` to `path` via a temporary file and link(2). Refuses (std::runtime_error) to
// replace an existing file: results are append-only. Every write, sync and close is checked; an
// error names the file and the system's reason (ENOSPC: "No space left on device").
void write_file_atomically(const std::filesystem::path& path, const std::string& content);

// A set of files that appear together or not at all: refused before anything is written if any of
// them exists; all written to temporaries (each write, sync and close checked); then linked in,
// in the order given (put the sidecar last), and a failure after the first link unlinks the ones
// linked. Files: (name, content).
void write_files_atomically(const std::filesystem::path& dir, const std::vector<std::pair<std::string, std::string>>& files);

// For files that are facts about a tool rather than measurements (the probes' tables): replaces
// `path` through a checked temporary and rename(2), so a failed write leaves the old file intact.
void replace_file_atomically(const std::filesystem::path& path, const std::string& content);

class RunDirectory {
 public:
  // Creates <root>/<cpu_slug>/<YYYYmmddTHHMMSSZ>-<commit[:12]>/ holding machine.json, adding -2,
  // -3 ... if that name is taken, so that no earlier run is ever touched. The directory is staged
  // under a hidden name and renamed when machine.json is in it: a run directory never exists
  // without its fingerprint, even when the process is killed.
  static RunDirectory create(const std::filesystem::path& root, const std::string& cpu_slug,
                             const std::string& git_commit, std::chrono::system_clock::time_point when,
                             const std::string& machine_json);
  // An existing run directory that later steps of one run add files to.
  static RunDirectory open(const std::filesystem::path& dir);

  const std::filesystem::path& path() const { return path_; }
  std::string run_id() const { return path_.filename().string(); }
  void write(const std::string& file_name, const std::string& content) const;
  // Throws, before any measurement, when a file of this set exists already or the directory is
  // not writable: checked first so that no measurement is thrown away at the end.
  void check_can_write(const std::vector<std::string>& file_names) const;

 private:
  std::filesystem::path path_;
};

}  // namespace dlab
