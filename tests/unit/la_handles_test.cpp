// la::Handle: each owned object is destroyed exactly once, ownership moves with the handle,
// release/reset/out behave like std::unique_ptr, and real PETSc objects lose exactly one
// reference.
#include <gtest/gtest.h>
#include <petscdmda.h>

#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/exec/rebalancer.hpp"
#include "fracmfg/la/petsc_handles.hpp"

namespace la = fracmfg::la;

// A stand-in PETSc object type whose Destroy records what it destroyed.
struct FakeObject {
  int id = 0;
  bool fail_destroy = false;
};
using Fake = FakeObject*;

namespace {

std::vector<int> destroyed;  // ids, in destruction order
int destroy_calls = 0;

PetscErrorCode fake_destroy(Fake* object) {
  ++destroy_calls;
  if (*object == nullptr) return 0;
  if ((*object)->fail_destroy) {
    delete *object;
    *object = nullptr;
    return PETSC_ERR_ARG_WRONG;
  }
  destroyed.push_back((*object)->id);
  delete *object;
  *object = nullptr;
  return 0;
}

using FakeHandle = la::Handle<Fake, fake_destroy>;

class HandleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    destroyed.clear();
    destroy_calls = 0;
  }
};

static_assert(!std::is_copy_constructible_v<FakeHandle>);
static_assert(!std::is_copy_assignable_v<FakeHandle>);
static_assert(std::is_nothrow_move_constructible_v<FakeHandle>);
static_assert(std::is_nothrow_move_assignable_v<FakeHandle>);
static_assert(std::is_same_v<la::VecHandle::handle_type, Vec>);

TEST_F(HandleTest, DestroysItsObjectExactlyOnceAtScopeExit) {
  {
    FakeHandle h(new FakeObject{1});
    EXPECT_EQ(h.get()->id, 1);
    EXPECT_TRUE(destroyed.empty());
  }
  EXPECT_EQ(destroyed, std::vector<int>({1}));
  EXPECT_EQ(destroy_calls, 1);
}

TEST_F(HandleTest, EmptyHandleNeverCallsDestroy) {
  { FakeHandle h; }
  { FakeHandle h(nullptr); }
  EXPECT_EQ(destroy_calls, 0);
}

TEST_F(HandleTest, MoveConstructionTransfersOwnership) {
  {
    FakeHandle a(new FakeObject{2});
    Fake raw = a.get();
    FakeHandle b(std::move(a));
    EXPECT_EQ(a.get(), nullptr);  // NOLINT(bugprone-use-after-move): documented state
    EXPECT_EQ(b.get(), raw);
    EXPECT_TRUE(destroyed.empty());
  }
  EXPECT_EQ(destroyed, std::vector<int>({2}));
  EXPECT_EQ(destroy_calls, 1);
}

TEST_F(HandleTest, MoveAssignmentDestroysTheOldObjectOnce) {
  {
    FakeHandle a(new FakeObject{3});
    FakeHandle b(new FakeObject{4});
    b = std::move(a);
    EXPECT_EQ(destroyed, std::vector<int>({4}));
    EXPECT_EQ(b.get()->id, 3);
    EXPECT_EQ(a.get(), nullptr);  // NOLINT(bugprone-use-after-move)
  }
  EXPECT_EQ(destroyed, std::vector<int>({4, 3}));
  EXPECT_EQ(destroy_calls, 2);
}

TEST_F(HandleTest, SelfMoveAssignmentKeepsTheObject) {
  {
    FakeHandle a(new FakeObject{5});
    FakeHandle& alias = a;
    a = std::move(alias);
    EXPECT_NE(a.get(), nullptr);
    EXPECT_TRUE(destroyed.empty());
  }
  EXPECT_EQ(destroyed, std::vector<int>({5}));
}

TEST_F(HandleTest, ReleaseGivesUpOwnershipWithoutDestroying) {
  Fake raw = nullptr;
  {
    FakeHandle h(new FakeObject{6});
    raw = h.release();
    EXPECT_EQ(h.get(), nullptr);
  }
  EXPECT_EQ(destroy_calls, 0);
  ASSERT_NE(raw, nullptr);
  EXPECT_EQ(raw->id, 6);
  FakeHandle again(raw);  // hand it back so it is freed
}

TEST_F(HandleTest, ResetDestroysTheOldObjectAndAdoptsTheNewOne) {
  FakeHandle h(new FakeObject{7});
  h.reset(new FakeObject{8});
  EXPECT_EQ(destroyed, std::vector<int>({7}));
  EXPECT_EQ(h.get()->id, 8);
  h.reset();
  EXPECT_EQ(destroyed, std::vector<int>({7, 8}));
  EXPECT_EQ(h.get(), nullptr);
  h.reset();  // nothing held: no call
  EXPECT_EQ(destroy_calls, 2);
}

TEST_F(HandleTest, OutDestroysTheOldObjectAndExposesTheSlot) {
  FakeHandle h(new FakeObject{9});
  Fake* slot = h.out();
  EXPECT_EQ(destroyed, std::vector<int>({9}));
  ASSERT_NE(slot, nullptr);
  EXPECT_EQ(*slot, nullptr);
  *slot = new FakeObject{10};  // what a PETSc creation routine does
  EXPECT_EQ(h.get()->id, 10);
}

TEST_F(HandleTest, SwapExchangesObjects) {
  FakeHandle a(new FakeObject{11});
  FakeHandle b(new FakeObject{12});
  swap(a, b);
  EXPECT_EQ(a.get()->id, 12);
  EXPECT_EQ(b.get()->id, 11);
  EXPECT_EQ(destroy_calls, 0);
}

TEST_F(HandleTest, FailingDestroyThrowsFromResetButNotFromTheDestructor) {
  FakeHandle h(new FakeObject{13, true});
  EXPECT_THROW(h.reset(), fracmfg::PetscError);
  EXPECT_EQ(h.get(), nullptr);  // not destroyed twice
  EXPECT_EQ(destroy_calls, 1);
  { FakeHandle quiet(new FakeObject{14, true}); }  // must not throw or terminate
  EXPECT_EQ(destroy_calls, 2);
}

TEST_F(HandleTest, AdoptsAUniquePtrOwner) {
  struct Deleter {
    void operator()(Fake f) const {
      Fake copy = f;
      fake_destroy(&copy);
    }
  };
  std::unique_ptr<FakeObject, Deleter> owner(new FakeObject{15});
  Fake raw = owner.get();
  {
    FakeHandle h(std::move(owner));
    EXPECT_EQ(owner.get(), nullptr);  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(h.get(), raw);
  }
  EXPECT_EQ(destroyed, std::vector<int>({15}));
  EXPECT_EQ(destroy_calls, 1);
}

PetscInt reference_count(PetscObject object) {
  PetscInt count = 0;
  FRACMFG_PETSC_CHECK(PetscObjectGetReference(object, &count));
  return count;
}

TEST(PetscHandles, VecHandleDropsExactlyOneReference) {
  Vec raw = nullptr;
  FRACMFG_PETSC_CHECK(VecCreateSeq(PETSC_COMM_SELF, 4, &raw));
  FRACMFG_PETSC_CHECK(PetscObjectReference(reinterpret_cast<PetscObject>(raw)));
  ASSERT_EQ(reference_count(reinterpret_cast<PetscObject>(raw)), 2);
  {
    la::VecHandle v(raw);
    FRACMFG_PETSC_CHECK(VecSet(v, 2.0));  // converts to Vec
    PetscReal norm = 0;
    FRACMFG_PETSC_CHECK(VecNorm(v, NORM_1, &norm));
    EXPECT_DOUBLE_EQ(norm, 8.0);
    la::VecHandle moved(std::move(v));
    EXPECT_EQ(moved.get(), raw);
  }
  EXPECT_EQ(reference_count(reinterpret_cast<PetscObject>(raw)), 1);
  FRACMFG_PETSC_CHECK(VecDestroy(&raw));
}

TEST(PetscHandles, OutReceivesAPetscCreation) {
  la::MatHandle m;
  FRACMFG_PETSC_CHECK(MatCreateSeqAIJ(PETSC_COMM_SELF, 3, 3, 1, nullptr, m.out()));
  ASSERT_NE(m.get(), nullptr);
  la::KspHandle ksp;
  FRACMFG_PETSC_CHECK(KSPCreate(PETSC_COMM_SELF, ksp.out()));
  EXPECT_EQ(reference_count(reinterpret_cast<PetscObject>(m.get())), 1);
  FRACMFG_PETSC_CHECK(KSPSetOperators(ksp, m, m));  // the KSP holds references too
  EXPECT_GT(reference_count(reinterpret_cast<PetscObject>(m.get())), 1);
  ksp.reset();  // destroying the KSP gives them back
  EXPECT_EQ(ksp.get(), nullptr);
  EXPECT_EQ(reference_count(reinterpret_cast<PetscObject>(m.get())), 1);
}

TEST(PetscHandles, DmHandleAdoptsAnExecDmPtr) {
  DM raw = nullptr;
  FRACMFG_PETSC_CHECK(DMDACreate1d(PETSC_COMM_SELF, DM_BOUNDARY_NONE, 8, 1, 1, nullptr, &raw));
  FRACMFG_PETSC_CHECK(DMSetUp(raw));
  fracmfg::exec::DmPtr owner(raw);
  FRACMFG_PETSC_CHECK(PetscObjectReference(reinterpret_cast<PetscObject>(raw)));
  {
    la::DmHandle dm(std::move(owner));
    EXPECT_EQ(owner.get(), nullptr);  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(dm.get(), raw);
    EXPECT_EQ(reference_count(reinterpret_cast<PetscObject>(raw)), 2);
  }
  EXPECT_EQ(reference_count(reinterpret_cast<PetscObject>(raw)), 1);
  FRACMFG_PETSC_CHECK(DMDestroy(&raw));
}

}  // namespace
