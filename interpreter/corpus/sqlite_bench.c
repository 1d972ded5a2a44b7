// The sqlite workload: SQLite's amalgamation (sqlite3.c from npm sqlite3@5.1.7) running a small
// shop database in memory. Each call opens a fresh :memory: database, fills it with `size`
// customers, size/4 + 16 products and size*8 orders (in one transaction, through prepared
// statements), runs a mix of queries (joins, GROUP BY, ORDER BY, LIKE and string functions, a
// window function, a correlated subquery, a recursive CTE), an UPDATE and a DELETE in a
// transaction and a rolled-back one, and closes the database, so calls are independent and leave
// nothing allocated. Every result cell is folded into the checksum as SQLite's text for it.

// SQLite's options, the same in the native and the wasm build.
#define SQLITE_THREADSAFE 0          // one thread: no mutexes
#define SQLITE_OMIT_LOAD_EXTENSION 1 // no dlopen
#define SQLITE_OMIT_WAL 1            // no shared-memory WAL (needs mmap, which WASI lacks)
#define SQLITE_TEMP_STORE 3          // temporary tables and sort spills in memory: no files at all
#define SQLITE_DEFAULT_MEMSTATUS 0   // no allocation statistics (the usual embedded setting)
// SQLite uses long double for text<->real conversion when it is wider than double: 80-bit on
// x86-64 but a software 128-bit type on wasm32. Plain double makes both builds run the same code
// (its double-double fallback) and give the same text.
#define LONGDOUBLE_TYPE double
// The unix VFS is compiled (SQLite handles __wasi__ itself), but a :memory: database with
// in-memory temporary storage never opens a file, reads the clock or asks for randomness.
#include "sqlite3.c"

#include "corpus.h"

static const char kName[] = "sqlite";

static const char* const kCities[] = {"Amsterdam", "Bergen", "Cork",  "Dresden", "Evora",   "Fribourg",
                                      "Ghent",     "Hamar",  "Izmir", "Jena",    "Kaunas",  "Lyon",
                                      "Malmo",     "Nantes", "Oulu",  "Porto",   "Quimper", "Riga"};
static const char* const kCategories[] = {"tools", "garden", "books", "toys", "kitchen", "music", "sport", "office"};
static const char* const kSyllables[] = {"an", "ber", "ca", "dor", "el", "fin", "ga", "hal",
                                         "in", "jo",  "ka", "lin", "mar", "no", "or", "pe"};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

// The schema and the work after loading. Every statement's rows are checksummed.
static const char kSchema[] =
    "CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL,"
    "                       tier INTEGER NOT NULL);"
    "CREATE TABLE products(id INTEGER PRIMARY KEY, title TEXT NOT NULL, category TEXT NOT NULL,"
    "                      price_cents INTEGER NOT NULL);"
    "CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers,"
    "                    product_id INTEGER NOT NULL REFERENCES products, qty INTEGER NOT NULL,"
    "                    day INTEGER NOT NULL);";

static const char kIndexes[] =
    "CREATE INDEX orders_customer ON orders(customer_id);"
    "CREATE INDEX orders_day ON orders(day, qty);"
    "CREATE INDEX customers_city ON customers(city, tier);";

static const char kQueries[] =
    // revenue per city: a three-way join, GROUP BY and ORDER BY on an aggregate
    "SELECT c.city, count(*), sum(o.qty * p.price_cents) AS revenue"
    "  FROM orders o JOIN customers c ON c.id = o.customer_id JOIN products p ON p.id = o.product_id"
    " GROUP BY c.city ORDER BY revenue DESC, c.city;"
    // string functions over a LIKE scan
    "SELECT count(*), sum(length(name)), max(upper(substr(name, 2, 3))), min(replace(name, 'a', '@')),"
    "       sum(instr(name, 'or'))"
    "  FROM customers WHERE name LIKE '%an%' OR name LIKE 'K%';"
    // an index range scan with GROUP BY; avg() is a real, printed by SQLite itself
    "SELECT day, count(*), sum(qty), avg(qty) FROM orders WHERE day BETWEEN 100 AND 160"
    " GROUP BY day ORDER BY day;"
    // best customers by tier: a correlated subquery over the orders index
    "SELECT c.name, c.tier, (SELECT count(*) FROM orders o WHERE o.customer_id = c.id) AS n"
    "  FROM customers c WHERE c.tier >= 3 ORDER BY n DESC, c.id LIMIT 40;"
    // a window function: each customer's running quantity, the last few rows of it
    "SELECT customer_id, day, running FROM ("
    "  SELECT customer_id, day, sum(qty) OVER (PARTITION BY customer_id ORDER BY day, id) AS running"
    "    FROM orders WHERE customer_id % 5 = 0)"
    " ORDER BY running DESC, customer_id, day LIMIT 25;"
    // categories with printf and group_concat over a sorted subquery
    "SELECT category, printf('%08.2f', avg(price_cents) / 100.0), group_concat(title, '|')"
    "  FROM (SELECT * FROM products ORDER BY title) GROUP BY category ORDER BY category;"
    // a recursive CTE: a histogram of order sizes in buckets
    "WITH RECURSIVE b(lo) AS (SELECT 1 UNION ALL SELECT lo + 2 FROM b WHERE lo < 9)"
    "SELECT lo, (SELECT count(*) FROM orders WHERE qty BETWEEN lo AND lo + 1) FROM b;";

static const char kChanges[] =
    // a price rise and a clean-up in one transaction
    "BEGIN;"
    "UPDATE products SET price_cents = price_cents * 11 / 10 WHERE category IN ('tools', 'garden');"
    "DELETE FROM orders WHERE qty = 1 AND day % 7 = 0;"
    "COMMIT;"
    // a deletion that is rolled back: the rollback journal restores every page
    "BEGIN;"
    "DELETE FROM orders WHERE customer_id % 3 = 0;"
    "SELECT count(*) FROM orders;"
    "ROLLBACK;"
    "SELECT count(*), sum(qty), max(id) FROM orders;"
    "SELECT c.city, sum(o.qty * p.price_cents) FROM orders o JOIN customers c ON c.id = o.customer_id"
    "  JOIN products p ON p.id = o.product_id WHERE p.category = 'tools' GROUP BY c.city ORDER BY c.city;";

// Runs every statement in `sql`, folding each row's cells into *h. Returns an SQLite result code;
// on an error it has printed the message.
static int run_sql(sqlite3* db, const char* sql, uint32_t* h) {
  while (*sql) {
    sqlite3_stmt* stmt = NULL;
    const char* tail = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &stmt, &tail);
    if (rc != SQLITE_OK) {
      corpus_fail(kName, "prepare", sqlite3_errmsg(db));
      return rc;
    }
    if (!stmt) break;  // only whitespace or comments were left
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      int n = sqlite3_column_count(stmt);
      for (int i = 0; i < n; ++i) {
        const unsigned char* text = sqlite3_column_text(stmt, i);
        *h = text ? corpus_hash(*h, text, (size_t)sqlite3_column_bytes(stmt, i)) : corpus_hash_u32(*h, 0xdeadu);
      }
      *h = corpus_hash_u32(*h, '\n');
    }
    if (rc != SQLITE_DONE) {
      corpus_fail(kName, "step", sqlite3_errmsg(db));
      sqlite3_finalize(stmt);
      return rc;
    }
    *h = corpus_hash_u32(*h, (uint32_t)sqlite3_changes(db));
    rc = sqlite3_finalize(stmt);
    if (rc != SQLITE_OK) return rc;
    sql = tail;
  }
  return SQLITE_OK;
}

// A made-up name of two to four syllables into buf (at least 16 bytes), capitalised.
static void make_name(uint32_t* rng, char* buf) {
  int n = 2 + (int)(corpus_rand(rng) % 3), len = 0;
  for (int i = 0; i < n; ++i)
    for (const char* s = kSyllables[corpus_rand(rng) % COUNT(kSyllables)]; *s; ++s) buf[len++] = *s;
  buf[len] = '\0';
  buf[0] = (char)(buf[0] - 'a' + 'A');
}

// Binds one row (an integer, two texts, an integer: customers and products; four integers:
// orders) to a prepared INSERT, steps it and resets it for the next row.
static int insert_row(sqlite3* db, sqlite3_stmt* stmt, int bind_rc) {
  if (bind_rc != SQLITE_OK) {
    corpus_fail(kName, "bind", sqlite3_errmsg(db));
    return bind_rc;
  }
  int rc = sqlite3_step(stmt);
  if (rc != SQLITE_DONE) {
    corpus_fail(kName, "insert", sqlite3_errmsg(db));
    return rc;
  }
  return sqlite3_reset(stmt);
}
static int insert_itti(sqlite3* db, sqlite3_stmt* stmt, int a, const char* b, const char* c, int d) {
  int rc = sqlite3_bind_int(stmt, 1, a);
  if (rc == SQLITE_OK) rc = sqlite3_bind_text(stmt, 2, b, -1, SQLITE_TRANSIENT);
  if (rc == SQLITE_OK) rc = sqlite3_bind_text(stmt, 3, c, -1, SQLITE_STATIC);
  if (rc == SQLITE_OK) rc = sqlite3_bind_int(stmt, 4, d);
  return insert_row(db, stmt, rc);
}
static int insert_iiii(sqlite3* db, sqlite3_stmt* stmt, int a, int b, int c, int d) {
  int rc = sqlite3_bind_int(stmt, 1, a);
  if (rc == SQLITE_OK) rc = sqlite3_bind_int(stmt, 2, b);
  if (rc == SQLITE_OK) rc = sqlite3_bind_int(stmt, 3, c);
  if (rc == SQLITE_OK) rc = sqlite3_bind_int(stmt, 4, d);
  return insert_row(db, stmt, rc);
}

// Loads the three tables in one transaction through prepared statements.
static int load(sqlite3* db, uint32_t size, uint32_t* h) {
  static const char* const kInserts[] = {
      "INSERT INTO customers(id, name, city, tier) VALUES (?1, ?2, ?3, ?4)",
      "INSERT INTO products(id, title, category, price_cents) VALUES (?1, ?2, ?3, ?4)",
      "INSERT INTO orders(customer_id, product_id, qty, day) VALUES (?1, ?2, ?3, ?4)",
  };
  sqlite3_stmt* ins[3] = {NULL, NULL, NULL};
  uint32_t rng = 0x9e3779b9u, customers = size, products = size / 4 + 16, orders = size * 8;
  char name[32];
  int rc = run_sql(db, "BEGIN", h);
  for (int i = 0; i < 3 && rc == SQLITE_OK; ++i)
    if ((rc = sqlite3_prepare_v2(db, kInserts[i], -1, &ins[i], NULL)) != SQLITE_OK) corpus_fail(kName, "prepare", sqlite3_errmsg(db));
  for (uint32_t i = 1; i <= customers && rc == SQLITE_OK; ++i) {
    make_name(&rng, name);
    const char* city = kCities[corpus_rand(&rng) % COUNT(kCities)];
    rc = insert_itti(db, ins[0], (int)i, name, city, (int)(corpus_rand(&rng) % 5));
  }
  for (uint32_t i = 1; i <= products && rc == SQLITE_OK; ++i) {
    make_name(&rng, name);
    const char* category = kCategories[corpus_rand(&rng) % COUNT(kCategories)];
    rc = insert_itti(db, ins[1], (int)i, name, category, (int)(99 + corpus_rand(&rng) % 20000));
  }
  for (uint32_t i = 1; i <= orders && rc == SQLITE_OK; ++i) {
    // Skewed: low customer ids order more, as real customers do.
    uint32_t r = corpus_rand(&rng);
    int customer = (int)(1 + (r % customers) * (r >> 28) / 15);
    int product = (int)(1 + corpus_rand(&rng) % products), qty = (int)(1 + corpus_rand(&rng) % 10);
    rc = insert_iiii(db, ins[2], customer, product, qty, (int)((uint64_t)i * 365 / orders));
  }
  for (int i = 0; i < 3; ++i) sqlite3_finalize(ins[i]);
  return rc == SQLITE_OK ? run_sql(db, "COMMIT", h) : rc;
}

CORPUS_ENTRY(sqlite) {
  if (size < 4) size = 4;
  sqlite3* db = NULL;
  // sqlite3_open_v2 allocates the handle even when it fails; it must be closed either way.
  if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
    corpus_fail(kName, "open", db ? sqlite3_errmsg(db) : "out of memory");
    sqlite3_close(db);
    return CORPUS_FAILED;
  }
  uint32_t h = CORPUS_HASH_INIT;
  int rc = run_sql(db, kSchema, &h);
  if (rc == SQLITE_OK) rc = load(db, size, &h);
  if (rc == SQLITE_OK) rc = run_sql(db, kIndexes, &h);
  if (rc == SQLITE_OK) rc = run_sql(db, kQueries, &h);
  if (rc == SQLITE_OK) rc = run_sql(db, kChanges, &h);
  if (sqlite3_close(db) != SQLITE_OK) return corpus_fail(kName, "close", "statements left unfinalised");
  return rc == SQLITE_OK ? corpus_finish(h) : CORPUS_FAILED;
}
