package com.example.shop;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import static org.assertj.core.api.Assertions.assertThat;

/** Two test methods that each call the endpoint limited to once an hour: both pass. */
@SpringBootTest
@AutoConfigureMockMvc
class ShopApplicationTests {

	@Autowired
	private MockMvcTester mvc;

	@Test
	void getsTheReport() {
		assertThat(this.mvc.get().uri("/report")).hasStatusOk().hasBodyTextEqualTo("report");
	}

	@Test
	void getsTheReportAgain() {
		assertThat(this.mvc.get().uri("/report")).hasStatusOk().hasBodyTextEqualTo("report");
	}

}
