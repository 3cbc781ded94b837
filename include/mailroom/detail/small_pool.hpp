// SPDX-License-Identifier: MIT
// Small blocks kept for reuse, per thread: the memory of futures, of the operations behind them
// and of transport requests. A PE may start hundreds of non-blocking operations before the first
// completes (one reduction per partition); glibc's per-thread cache keeps 7 blocks of a size, so
// the rest went through malloc's slow path (measured: malloc and free were a fifth of a pipelined
// reduction's time). std::pmr's unsynchronized pools are unsafe once a block is freed on another
// thread than it came from; the synchronized one locks. Here a block is freed into the list of
// the thread that frees it, which is always safe. Under AddressSanitizer blocks go straight to
// new and delete, so that a use after free is still caught.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#define MAILROOM_POOL_OFF 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MAILROOM_POOL_OFF 1
#endif
#endif

namespace mailroom::detail {

class small_pool {
 public:
  static constexpr std::size_t k_granule = 16;   ///< sizes are rounded up to this
  static constexpr std::size_t k_classes = 16;   ///< so blocks up to 256 bytes are kept
  static constexpr std::uint32_t k_keep = 4096;  ///< free blocks kept per size and thread

  /// A block of `bytes`, aligned for any type of at most __STDCPP_DEFAULT_NEW_ALIGNMENT__
  /// (16 on x86-64; over-aligned types take ::operator new with their alignment instead).
  static void* allocate(std::size_t bytes) {
    const std::size_t c = size_class(bytes);
    if (c >= k_classes) return ::operator new(bytes);
    if (!gone()) {
      lists& l = mine();
      if (node* n = l.head[c]) {
        l.head[c] = n->next;
        --l.count[c];
        return n;
      }
    }
    // (The whole class's size even without lists: another thread may keep the block.)
    return ::operator new((c + 1) * k_granule);
  }
  static void deallocate(void* p, std::size_t bytes) noexcept {
    const std::size_t c = size_class(bytes);
    if (c < k_classes && !gone()) {
      lists& l = mine();
      if (l.count[c] < k_keep) {
        auto* n = static_cast<node*>(p);
        n->next = l.head[c];
        l.head[c] = n;
        ++l.count[c];
        return;
      }
    }
    ::operator delete(p);
  }

 private:
  struct node {
    node* next;
  };
  struct lists {
    node* head[k_classes] = {};
    std::uint32_t count[k_classes] = {};
    lists() = default;
    lists(const lists&) = delete;
    lists& operator=(const lists&) = delete;
    ~lists() {
      gone() = true;  // (blocks freed later in this thread's exit go straight to delete)
      for (node*& h : head)
        while (h != nullptr) {
          node* n = h;
          h = n->next;
          ::operator delete(n);
        }
    }
  };
  static std::size_t size_class(std::size_t bytes) noexcept {
#ifdef MAILROOM_POOL_OFF
    (void)bytes;
    return k_classes;
#else
    return bytes == 0 ? k_classes : (bytes - 1) / k_granule;
#endif
  }
  static lists& mine() noexcept {
    thread_local lists l;
    return l;
  }
  // True once this thread's lists are gone (trivially destructible: valid to the thread's end).
  static bool& gone() noexcept {
    thread_local bool g = false;
    return g;
  }
};

/// An allocator over small_pool, for std::allocate_shared.
template <class T>
struct pool_allocator {
  using value_type = T;
  pool_allocator() noexcept = default;
  template <class U>
  pool_allocator(const pool_allocator<U>&) noexcept {}  // NOLINT(google-explicit-constructor)
  T* allocate(std::size_t n) {
    if constexpr (alignof(T) > __STDCPP_DEFAULT_NEW_ALIGNMENT__)
      return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{alignof(T)}));
    else
      return static_cast<T*>(small_pool::allocate(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if constexpr (alignof(T) > __STDCPP_DEFAULT_NEW_ALIGNMENT__)
      ::operator delete(p, std::align_val_t{alignof(T)});
    else
      small_pool::deallocate(p, n * sizeof(T));
  }
  template <class U>
  bool operator==(const pool_allocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace mailroom::detail
