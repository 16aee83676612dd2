package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/clustertest"
	"github.com/brinesalt/brine/internal/testsupport/dbtest"
)

// TestScheduleReturnerMySQL: a job scheduled every 2 s with
// `returner: mysql` writes its returns into a throwaway MariaDB's
// salt_returns (Salt's table), the full_ret carrying the schedule name,
// as issue 13's `return:` in a schedule asks.
func TestScheduleReturnerMySQL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemons and MariaDB")
	}
	my := dbtest.MariaDB(t)
	c := clustertest.New(t, "auto_accept: True\n")
	conf := fmt.Sprintf("mysql.host: %s\nmysql.port: %d\nmysql.user: %s\nmysql.pass: %s\nmysql.db: %s\n", my.Host, my.Port, my.User, my.Pass, my.DB)
	c.StartMinion("s2", c.MinionConf("s2", "s2", conf+`schedule:
  to_mysql:
    function: test.echo
    args: [scheduled]
    seconds: 2
    returner: mysql
`))
	c.PingUntil("s2", "s2")
	db, err := my.SQL()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c.WaitFor("two scheduled rows in salt_returns", func() bool {
		var n int
		err := db.QueryRow("SELECT COUNT(*) FROM salt_returns WHERE id = 's2' AND fun = 'test.echo' AND `return` = '\"scheduled\"'").Scan(&n)
		return err == nil && n >= 2
	})
	var full string
	if err := db.QueryRow("SELECT full_ret FROM salt_returns WHERE id = 's2' LIMIT 1").Scan(&full); err != nil && err != sql.ErrNoRows {
		t.Fatal(err)
	}
	var ret map[string]any
	if err := json.Unmarshal([]byte(full), &ret); err != nil || ret["schedule"] != "to_mysql" || ret["fun"] != "test.echo" {
		t.Fatalf("full_ret %s: %v", full, err)
	}
}
