// Package winetest is empty in Windows builds; see winetest.go.
package winetest
