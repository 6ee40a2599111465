// the build passed; check that it ran the four tests, so that a build that ran none does not pass
def reports = new File(basedir, 'target/surefire-reports').listFiles().findAll { it.name ==~ /TEST-.*\.xml/ }
def suites = reports.collect { new groovy.xml.XmlSlurper().parse(it) }
def run = suites.sum { it.@tests.toInteger() }
def failed = suites.sum { it.@failures.toInteger() + it.@errors.toInteger() + it.@skipped.toInteger() }
assert run == 4 : "expected 4 tests, ran ${run}"
assert failed == 0 : "${failed} tests failed, erred or were skipped"
