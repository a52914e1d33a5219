// SPDX-License-Identifier: GPL-2.0-only
/*
 * Two BTF types compared by layout (lib/bpf/btf_layout.c), on types built
 * here: the same struct in two BTF objects, and each change a newer build
 * could make to it (a member moved, renamed, resized, an array longer, a
 * signedness changed), through typedefs; bounded on self-referencing and
 * deep types.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <bpf/btf.h>

#include "btf_layout.h"
#include "unit.h"

enum change { SAME, MOVED, RENAMED, WIDER, LONGER, UNSIGNED, TYPEDEF, UNION };

/* struct order { u32 lock; u32 n; u64 est[8]; } with one change; its id. */
static int build(struct btf *b, enum change c)
{
	int u32 = btf__add_int(b, "u32", 4, 0);
	int u64 = btf__add_int(b, "u64", 8, 0);
	int s64 = btf__add_int(b, "s64", 8, BTF_INT_SIGNED);
	int arr = btf__add_array(b, u32, c == UNSIGNED ? s64 : u64, c == LONGER ? 9 : 8);
	int n_type = c == TYPEDEF ? btf__add_typedef(b, "count_t", u32) : u32;
	int id = c == UNION ? btf__add_union(b, "order", 80) :
			      btf__add_struct(b, "order", c == LONGER ? 80 : 72);

	assert_true(u32 > 0 && u64 > 0 && s64 > 0 && arr > 0 && n_type > 0 && id > 0);
	assert_int_equal(btf__add_field(b, "lock", u32, 0, 0), 0);
	/* a union's members are all at 0 */
	assert_int_equal(btf__add_field(b, c == RENAMED ? "m" : "n", c == WIDER ? u64 : n_type,
					c == UNION ? 0 : 32, 0),
			 0);
	assert_int_equal(btf__add_field(b, "est", arr,
					c == UNION ? 0 :
					c == MOVED ? 128 :
						     64,
					0),
			 0);
	return id;
}

static void test_same_layout(void **state)
{
	static const struct {
		enum change c;
		bool same;
	} cases[] = {
		{ SAME, true },	   { TYPEDEF, true }, /* a typedef is looked through */
		{ MOVED, false },  { RENAMED, false },	{ WIDER, false },
		{ LONGER, false }, { UNSIGNED, false }, { UNION, false },
	};
	struct btf *ours = btf__new_empty();
	int id = build(ours, SAME);

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct btf *other = btf__new_empty();
		int oid = build(other, cases[i].c);

		if (tls_btf_same_layout(other, oid, ours, id) != cases[i].same ||
		    tls_btf_same_layout(ours, id, other, oid) != cases[i].same)
			fail_msg("change %d: taken as %s", cases[i].c,
				 cases[i].same ? "different" : "the same");
		btf__free(other);
	}
	assert_true(tls_btf_same_layout(ours, id, ours, id));
	assert_false(tls_btf_same_layout(NULL, id, ours, id));
	assert_false(tls_btf_same_layout(ours, 9999, ours, id)); /* no such type */
	btf__free(ours);
}

/* A struct that holds an array of itself through a pointer is fine (a
 * pointer is not followed); nesting past the bound is taken as different,
 * not walked on. */
static void test_bounded(void **state)
{
	struct btf *b = btf__new_empty();
	int u32 = btf__add_int(b, "u32", 4, 0), prev = u32, deep, i;
	/* the pointer to the struct comes before it: fields go to the last
	 * type added */
	int ptr = btf__add_ptr(b, u32 + 2), s = btf__add_struct(b, "self", 16);

	(void)state;
	assert_true(ptr > 0 && s == u32 + 2);
	assert_int_equal(btf__add_field(b, "next", ptr, 0, 0), 0);
	assert_int_equal(btf__add_field(b, "v", u32, 64, 0), 0);
	assert_true(tls_btf_same_layout(b, s, b, s));
	for (i = 0; i < 20; i++) { /* 20 arrays of arrays */
		prev = btf__add_array(b, u32, prev, 1);
		assert_true(prev > 0);
	}
	deep = prev;
	assert_false(tls_btf_same_layout(b, deep, b, deep));
	btf__free(b);
}

int run_btf_layout_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_layout),
		cmocka_unit_test(test_bounded),
	};

	return cmocka_run_group_tests_name("btf layout", tests, NULL, NULL);
}
