// SPDX-License-Identifier: GPL-2.0-only
/* Two BTF types compared by their memory layout (btf_layout.h). */
#include <string.h>

#include <bpf/btf.h>

#include "btf_layout.h"

/* Deeper, or more types, than any struct tlsd shares with its programs
 * (two levels, 60 members): past either, taken as different. */
#define MAX_DEPTH  8
#define MAX_VISITS 4096

/* The type behind typedefs and qualifiers; NULL if there is none. */
static const struct btf_type *plain(const struct btf *btf, __u32 *id)
{
	int r = btf__resolve_type(btf, *id);

	if (r < 0)
		return NULL;
	*id = (__u32)r;
	return btf__type_by_id(btf, *id);
}

static bool same(const struct btf *a, __u32 ida, const struct btf *b, __u32 idb, int depth,
		 unsigned int *visits)
{
	const struct btf_type *ta, *tb;
	__u16 i, n;

	if (depth > MAX_DEPTH || ++*visits > MAX_VISITS)
		return false;
	ta = plain(a, &ida);
	tb = plain(b, &idb);
	if (!ta || !tb || btf_kind(ta) != btf_kind(tb))
		return false;
	switch (btf_kind(ta)) {
	case BTF_KIND_INT:
		return ta->size == tb->size && btf_int_bits(ta) == btf_int_bits(tb) &&
		       btf_int_offset(ta) == btf_int_offset(tb) &&
		       (btf_int_encoding(ta) & BTF_INT_SIGNED) ==
			       (btf_int_encoding(tb) & BTF_INT_SIGNED);
	case BTF_KIND_PTR:
		return true; /* both a pointer of this machine */
	case BTF_KIND_ENUM:
		return ta->size == tb->size;
	case BTF_KIND_ARRAY:
		return btf_array(ta)->nelems == btf_array(tb)->nelems &&
		       same(a, btf_array(ta)->type, b, btf_array(tb)->type, depth + 1, visits);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		n = btf_vlen(ta);
		if (ta->size != tb->size || n != btf_vlen(tb))
			return false;
		for (i = 0; i < n; i++) {
			const struct btf_member *ma = btf_members(ta) + i,
						*mb = btf_members(tb) + i;
			const char *na = btf__name_by_offset(a, ma->name_off);
			const char *nb = btf__name_by_offset(b, mb->name_off);

			if (!na || !nb || strcmp(na, nb) ||
			    btf_member_bit_offset(ta, i) != btf_member_bit_offset(tb, i) ||
			    btf_member_bitfield_size(ta, i) != btf_member_bitfield_size(tb, i) ||
			    !same(a, ma->type, b, mb->type, depth + 1, visits))
				return false;
		}
		return true;
	default:
		return false; /* nothing a shared value is made of */
	}
}

bool tls_btf_same_layout(const struct btf *a, __u32 ida, const struct btf *b, __u32 idb)
{
	unsigned int visits = 0;

	return a && b && same(a, ida, b, idb, 0, &visits);
}
