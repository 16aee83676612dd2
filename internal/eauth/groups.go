package eauth

import (
	"fmt"
	"os/user"
	"slices"
)

// SystemGroups is salt.utils.user.get_group_list: the sorted names of the
// groups user belongs to in the system group database, its primary
// group included.
func SystemGroups(username string) ([]string, error) {
	u, err := user.Lookup(username)
	if err != nil {
		return nil, fmt.Errorf("groups of %s: %w", username, err)
	}
	ids, err := u.GroupIds()
	if err != nil {
		return nil, fmt.Errorf("groups of %s: %w", username, err)
	}
	var out []string
	for _, id := range ids {
		g, err := user.LookupGroupId(id)
		if err != nil {
			continue // a gid without a name has nothing to match
		}
		if !slices.Contains(out, g.Name) {
			out = append(out, g.Name)
		}
	}
	slices.Sort(out)
	return out, nil
}
