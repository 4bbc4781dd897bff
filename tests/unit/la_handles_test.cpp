// la::Handle: each owned object is destroyed exactly once, ownership moves with the handle,
// release/reset/out behave like std::unique_ptr, and real PETSc objects lose exactly one
// reference. la::require_solved (la/solve_check.hpp): unchecked inexact solves refused.
#include <gtest/gtest.h>
#include <petscdmda.h>

#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/exec/rebalancer.hpp"
#include "fracmfg/la/petsc_handles.hpp"
#include "la/solve_check.hpp"

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

// la::require_solved: a KSP that stops without checking its result (preonly, or richardson
// without a norm) is checked against ||b - A x|| / ||b||; exact preconditioners and
// Krylov methods that measure their residual are not.
namespace {

struct SolveCase {
  const char* ksp;
  const char* pc;
  bool refused;
};

std::string solve_with(const SolveCase& c) {
  // tridiag(-1, 3, -1): jacobi alone is far from its inverse.
  const PetscInt n = 20;
  Mat a = nullptr;
  MatCreateSeqAIJ(PETSC_COMM_SELF, n, n, 3, nullptr, &a);
  for (PetscInt i = 0; i < n; ++i) {
    if (i > 0) MatSetValue(a, i, i - 1, -1.0, INSERT_VALUES);
    MatSetValue(a, i, i, 3.0, INSERT_VALUES);
    if (i + 1 < n) MatSetValue(a, i, i + 1, -1.0, INSERT_VALUES);
  }
  MatAssemblyBegin(a, MAT_FINAL_ASSEMBLY);
  MatAssemblyEnd(a, MAT_FINAL_ASSEMBLY);
  const fracmfg::la::MatHandle mat(a);
  Vec b = nullptr;
  MatCreateVecs(a, &b, nullptr);
  const fracmfg::la::VecHandle rhs(b);
  VecSet(b, 1.0);
  Vec x = nullptr;
  VecDuplicate(b, &x);
  const fracmfg::la::VecHandle sol(x);
  KSP k = nullptr;
  KSPCreate(PETSC_COMM_SELF, &k);
  const fracmfg::la::KspHandle ksp(k);
  KSPSetOptionsPrefix(k, "t_");
  KSPSetOperators(k, a, a);
  KSPSetType(k, c.ksp);
  if (std::string(c.ksp) == KSPRICHARDSON) {
    KSPSetNormType(k, KSP_NORM_NONE);
    KSPSetTolerances(k, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT, 3);
  }
  PC pc = nullptr;
  KSPGetPC(k, &pc);
  PCSetType(pc, c.pc);
  KSPSolve(k, b, x);
  try {
    fracmfg::la::require_solved(k, b, x, "test solve");
  } catch (const fracmfg::core::CollectiveError& e) {
    EXPECT_EQ(e.exit_code(), fracmfg::ExitCode::numerical);
    return e.what();
  }
  return "";
}

TEST(RequireSolved, UncheckedInexactSolvesAreRefusedOthersPass) {
  for (const SolveCase& c :
       {SolveCase{KSPPREONLY, PCJACOBI, true}, SolveCase{KSPRICHARDSON, PCJACOBI, true},
        SolveCase{KSPPREONLY, PCILU, false},  // ILU(0) of a tridiagonal: exact
        SolveCase{KSPPREONLY, PCLU, false}, SolveCase{KSPGMRES, PCJACOBI, false}}) {
    const std::string what = solve_with(c);
    if (c.refused) {
      EXPECT_EQ(
          what.rfind(std::string("test solve: the linear solve (KSP ") + c.ksp + ", PC " + c.pc +
                         ") stopped without checking its result and left a relative residual ",
                     0),
          0u)
          << what;
      EXPECT_NE(what.find("use -t_ksp_type gmres"), std::string::npos) << what;
    } else {
      EXPECT_EQ(what, "") << c.ksp << " " << c.pc;
    }
  }
}

}  // namespace
