// A template-heavy translation unit for the apps suite's g++ entry (seed 002's
// scenario: a compile whose memory is the compiler's): MODELS distinct model
// types, each a tuple of fields, a variant of its events, a map of its rows and
// a visitor over them, all instantiated. The compiler's memory and time grow
// with -DMODELS=N; the program itself is never run.
#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#ifndef MODELS
#define MODELS 100
#endif

template <int M, int F>
struct Field {
  std::array<long, 1 + F % 4> values{};
  std::optional<std::string> note;
  long sum() const { return std::accumulate(values.begin(), values.end(), long(F)); }
};

template <int M, int... F>
auto make_fields(std::integer_sequence<int, F...>) -> std::tuple<Field<M, F>...>;

template <int M, int E>
struct Event {
  long id = E;
  std::vector<Field<M, E>> changes;
};

template <int M, int... E>
auto make_events(std::integer_sequence<int, E...>) -> std::variant<Event<M, E>...>;

template <int M>
struct Model {
  using Fields = decltype(make_fields<M>(std::make_integer_sequence<int, 8>{}));
  using Events = decltype(make_events<M>(std::make_integer_sequence<int, 6>{}));
  Fields fields;
  std::map<std::string, std::vector<Events>> rows;
  std::function<long(const Events&)> weigh = [](const Events& e) {
    return std::visit([](const auto& ev) { return ev.id + long(ev.changes.size()); }, e);
  };

  long total() const {
    long t = std::apply([](const auto&... f) { return (f.sum() + ... + 0L); }, fields);
    for (const auto& [key, events] : rows)
      for (const auto& e : events) t += weigh(e) + long(key.size());
    return t;
  }
  void add(const std::string& key, long n) {
    auto& v = rows[key];
    for (long i = 0; i < n; ++i) v.emplace_back(std::in_place_index<M % 6>);
    std::sort(v.begin(), v.end(), [this](const Events& a, const Events& b) { return weigh(a) < weigh(b); });
  }
};

template <int... M>
long run_all(std::integer_sequence<int, M...>) {
  long t = 0;
  ((t += [] {
     auto m = std::make_unique<Model<M>>();
     m->add("model-" + std::to_string(M), M % 7);
     return m->total();
   }()),
   ...);
  return t;
}

int main() { return int(run_all(std::make_integer_sequence<int, MODELS>{}) & 1); }
