/* SPDX-License-Identifier: BSD-3-Clause
 *
 * abi.c - the ABI layout table that keeps C and LuaJIT in agreement: every
 * struct of the FFI ABI with each field's offset and size, as this compiler
 * lays them out. The rows are generated from the ABI block of surge.h
 * (cmake/gen_cdef.cmake), so no field is left out; tests/lua/test_abi.lua
 * compares LuaJIT's view with them.
 */
#include <stddef.h>

#include "base.h"

#define F(T, f) { "struct " #T, #f, offsetof(struct T, f), sizeof(((struct T *)0)->f) }
#define S(T) { "struct " #T, "", 0, sizeof(struct T) }
static const struct surge_abi_field abi_fields[] = {
#include "surge_abi_table.h"
};
#undef F
#undef S

const struct surge_abi_field *
surge_abi_fields(uint32_t *count)
{
	*count = sizeof(abi_fields) / sizeof(abi_fields[0]);
	return abi_fields;
}
