/*
 * mem backend attributes: a small array per object; page 1 (user object
 * information) is computed from the object instead of stored (see mem.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backends/mem.h"
#include "proto/byteorder.h"

static bool attr_is_info(const struct osdfs_attr *a)
{
	return a->page == PAGE_USER_INFO;
}

static struct mem_attr *attr_find(const struct mem_object *obj, uint32_t page, uint32_t number)
{
	for (size_t i = 0; i < obj->nattrs; i++)
		if (obj->attrs[i].page == page && obj->attrs[i].number == number)
			return &obj->attrs[i];
	return NULL;
}

int osdfs__mem_attrs_check(const struct osdfs_attr *attrs, int nattrs)
{
	if (nattrs < 0 || (nattrs > 0 && !attrs))
		return -EINVAL;
	for (int i = 0; i < nattrs; i++) {
		const struct osdfs_attr *a = &attrs[i];

		if (a->page == ATTR_WILDCARD || a->number == ATTR_WILDCARD ||
		    a->len > MEM_ATTR_MAX_LEN || (a->len && !a->value))
			return -EINVAL;
		/* Page 1 is computed; only the logical length may be set. */
		if (attr_is_info(a) && (a->number != ATTR_LOGICAL_LENGTH || a->len != 8))
			return -EINVAL;
	}
	return 0;
}

/* Net change of attribute bytes if @attrs were set (the last of duplicate
 * entries wins, as when they are applied in order). */
int64_t osdfs__mem_attrs_growth(const struct mem_object *obj, const struct osdfs_attr *attrs, int n)
{
	int64_t delta = 0;

	for (int i = 0; i < n; i++) {
		const struct mem_attr *old;
		bool later = false;

		if (attr_is_info(&attrs[i]))
			continue;
		for (int j = i + 1; j < n && !later; j++)
			later = attrs[j].page == attrs[i].page && attrs[j].number == attrs[i].number;
		if (later)
			continue;
		old = obj ? attr_find(obj, attrs[i].page, attrs[i].number) : NULL;
		delta += (int64_t)attrs[i].len - (old ? (int64_t)old->len : 0);
	}
	return delta;
}

void osdfs__mem_plan_free(struct osdfs__mem_plan *p, int n)
{
	if (!p->copies)
		return;
	for (int i = 0; i < n; i++)
		free(p->copies[i]);
	free(p->copies);
	p->copies = NULL;
}

int osdfs__mem_plan_prepare(struct osdfs__mem_plan *p, struct mem_object *obj,
			const struct osdfs_attr *attrs, int n)
{
	p->copies = NULL;
	if (!n)
		return 0;
	if (obj->nattrs + (size_t)n > obj->attr_cap) {
		size_t cap = obj->attr_cap ? obj->attr_cap : 4;
		struct mem_attr *a;

		while (cap < obj->nattrs + (size_t)n)
			cap *= 2;
		a = realloc(obj->attrs, cap * sizeof(*a));
		if (!a)
			return -ENOMEM;
		obj->attrs = a;
		obj->attr_cap = cap;
	}
	p->copies = calloc((size_t)n, sizeof(*p->copies));
	if (!p->copies)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		if (!attrs[i].len || attr_is_info(&attrs[i]))
			continue;
		p->copies[i] = malloc(attrs[i].len);
		if (!p->copies[i]) {
			osdfs__mem_plan_free(p, n);
			return -ENOMEM;
		}
		memcpy(p->copies[i], attrs[i].value, attrs[i].len);
	}
	return 0;
}

void osdfs__mem_plan_commit(struct osdfs__mem_plan *p, struct osdfs_mem_store *s, struct mem_object *obj,
			const struct osdfs_attr *attrs, int n)
{
	for (int i = 0; i < n; i++) {
		const struct osdfs_attr *a = &attrs[i];
		struct mem_attr *old;

		if (attr_is_info(a)) {
			uint64_t len = osd__get_be64(a->value);

			osdfs__mem_truncate(s, obj, len > MEM_MAX_LENGTH ? MEM_MAX_LENGTH : len);
			continue;
		}
		old = attr_find(obj, a->page, a->number);
		if (old) {
			s->used -= old->len;
			free(old->value);
			if (!a->len) {
				*old = obj->attrs[--obj->nattrs];
				continue;
			}
		} else if (!a->len) {
			continue;
		} else {
			old = &obj->attrs[obj->nattrs++];
			old->page = a->page;
			old->number = a->number;
		}
		old->len = a->len;
		old->value = p->copies ? p->copies[i] : NULL;
		if (p->copies)
			p->copies[i] = NULL;
		s->used += a->len;
	}
	osdfs__mem_plan_free(p, n);
}

/* Fill one get entry from page 1 (computed values). */
static void attr_get_info(const struct mem_object *obj, struct osdfs_attr *a)
{
	unsigned char v[8];
	uint32_t room = a->len;

	switch (a->number) {
	case ATTR_OBJECT_ID:
		osd__put_be64(v, obj->node.key);
		break;
	case ATTR_USED_CAPACITY:
		osd__put_be64(v, obj->data_used);
		break;
	case ATTR_LOGICAL_LENGTH:
		osd__put_be64(v, obj->size);
		break;
	default:
		a->len = 0;
		return;
	}
	if (a->value)
		memcpy(a->value, v, room < 8 ? room : 8);
	a->len = 8;
}

int osdfs__mem_attrs_get(const struct mem_object *obj, struct osdfs_attr *attrs, int n)
{
	if (n < 0 || (n > 0 && !attrs))
		return -EINVAL;
	for (int i = 0; i < n; i++)
		if (attrs[i].page == ATTR_WILDCARD || attrs[i].number == ATTR_WILDCARD ||
		    (attrs[i].len && !attrs[i].value))
			return -EINVAL;
	for (int i = 0; i < n; i++) {
		struct osdfs_attr *a = &attrs[i];
		const struct mem_attr *m;

		if (attr_is_info(a)) {
			attr_get_info(obj, a);
			continue;
		}
		m = attr_find(obj, a->page, a->number);
		if (!m) {
			a->len = 0;
			continue;
		}
		if (a->value)
			memcpy(a->value, m->value, m->len < a->len ? m->len : a->len);
		a->len = m->len;
	}
	return 0;
}

int osdfs__mem_attrs_get_all(const struct mem_object *obj, struct osdfs_attr *attrs, int max,
			     void *buf, size_t buflen)
{
	size_t used = 0;

	if (obj->nattrs > (size_t)(max < 0 ? 0 : max))
		return -ENOSPC;
	for (size_t i = 0; i < obj->nattrs; i++) {
		const struct mem_attr *m = &obj->attrs[i];

		if (m->len > buflen - used)
			return -ENOSPC;
		attrs[i] = (struct osdfs_attr){ m->page, m->number, (uint8_t *)buf + used, m->len };
		memcpy(attrs[i].value, m->value, m->len);
		used += m->len;
	}
	return (int)obj->nattrs;
}

void osdfs__mem_attrs_free(struct mem_object *obj)
{
	for (size_t i = 0; i < obj->nattrs; i++)
		free(obj->attrs[i].value);
	free(obj->attrs);
	obj->attrs = NULL;
	obj->nattrs = obj->attr_cap = 0;
}
